"""The SDK client that reaches this process's own langgraph API (no URL), made so that a
call cancelled before its response starts cancels the request it made: langgraph-api's
in-process transport would leave that request running past the route's deadline.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any

import httpx
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from starlette.types import ASGIApp, Receive, Scope, Send

# The in-process transport's base URL and mount (what ``get_client()`` uses).
BASE_URL = "http://api"
ROOT_PATH = "/noauth"

# The tasks running the requests of the call in progress (set per call).
_request_tasks: ContextVar[set[asyncio.Task[Any]] | None] = ContextVar(
    "evoscientist_in_process_requests", default=None
)


def _tracked(app: ASGIApp) -> ASGIApp:
    async def tracked(scope: Scope, receive: Receive, send: Send) -> None:
        tasks, task = _request_tasks.get(), asyncio.current_task()
        if tasks is not None and task is not None:
            tasks.add(task)
        try:
            await app(scope, receive, send)
        finally:
            if tasks is not None and task is not None:
                tasks.discard(task)

    return tracked


def in_process_client(timeout: float) -> LangGraphClient:
    """A client of this server's own API; its requests end with their caller (with
    another SDK or server version, the SDK's own in-process client)."""
    try:
        from langgraph_api.server import app
        from langgraph_sdk._shared.utilities import get_asgi_transport
    except ImportError:  # pragma: no cover - another SDK or server version
        return get_client(url=None, api_key=None, timeout=timeout)

    base: type[httpx.ASGITransport] = get_asgi_transport()

    class CancellableTransport(base):  # type: ignore[misc, valid-type]
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            tasks: set[asyncio.Task[Any]] = set()
            token = _request_tasks.set(tasks)
            try:
                return await super().handle_async_request(request)
            except asyncio.CancelledError:
                for task in tasks:
                    task.cancel()
                raise
            finally:
                _request_tasks.reset(token)

    transport = CancellableTransport(app=_tracked(app), root_path=ROOT_PATH)
    http = httpx.AsyncClient(base_url=BASE_URL, transport=transport, timeout=timeout)
    return LangGraphClient(http)
