"""The host's floor for held requests: the host app named by ``BENCH_HOST_APP``
(``module:attr``) with one more route in front, a held request that does nothing.

``GET /api/bench-floor/hold?wait=N`` holds until ``POST /api/bench-floor/release`` (or
``N`` seconds), watching for its client to leave as any held route must (one receive,
as Starlette's own ``StreamingResponse`` does), then answers a small JSON body. The
crowd bench holds a thousand of them beside a run, as it holds the route's long-polls:
what they cost the run, and how soon after the release the last answer arrives, is
what the host's own middleware costs a held request that reads nothing, renders
nothing and shares nothing. Served as ``http.app`` by path (``bench/host_floor.py:app``).
"""

from __future__ import annotations

import asyncio
import importlib
import os

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive

HOLD_PATH = "/api/bench-floor/hold"
RELEASE_PATH = "/api/bench-floor/release"
# What the load generator reads from a route's answer.
BODY = {"complete": True, "content": "", "completed_at": None}
_released: dict[asyncio.AbstractEventLoop, asyncio.Future[None]] = {}


def _release_future() -> asyncio.Future[None]:
    loop = asyncio.get_running_loop()
    future = _released.get(loop)
    if future is None or future.done():
        future = _released[loop] = loop.create_future()
    return future


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def hold(request: Request) -> Response:
    released = _release_future()
    gone = asyncio.ensure_future(_disconnected(request.receive))
    try:
        await asyncio.wait(
            (released, gone),
            timeout=float(request.query_params.get("wait", "30")),
            return_when=asyncio.FIRST_COMPLETED,
        )
    finally:
        gone.cancel()
    return JSONResponse(BODY)


async def release(request: Request) -> Response:
    _release_future().set_result(None)
    return Response(status_code=204)


def _host_app() -> object:
    module, _, attribute = os.environ["BENCH_HOST_APP"].partition(":")
    host = getattr(importlib.import_module(module), attribute)
    host.router.routes[:0] = [
        Route(HOLD_PATH, hold, methods=["GET"]),
        Route(RELEASE_PATH, release, methods=["POST"]),
    ]
    return host


def __getattr__(name: str) -> object:
    # ``app`` is built when the server asks for it: the bench itself imports only the
    # paths above.
    if name == "app":
        return _host_app()
    raise AttributeError(name)
