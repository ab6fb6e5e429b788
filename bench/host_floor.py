"""The host's floor for held requests: the host app named by ``BENCH_HOST_APP``
(``module:attr``) with held requests in front that read, render and share nothing, so
the crowd bench can tell what the host's own middleware costs from what the route does.
Served as ``http.app`` by path (``bench/host_floor.py:app``).
"""

from __future__ import annotations

import asyncio
import importlib
import os

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from evoscientist_final_answer.http.longpoll.delivery import Parked, Parking
from evoscientist_final_answer.http.longpoll.held_response import END_OF_BODY, _own

HOLD_PATH = "/api/bench-floor/hold"
RELEASE_PATH = "/api/bench-floor/release"
PASS_HOLD_PATH = "/api/bench-floor/hold-pass"
PASS_RELEASE_PATH = "/api/bench-floor/release-pass"
# What the load generator reads from a route's answer.
BODY = {"complete": True, "content": "", "completed_at": None}
_released: dict[asyncio.AbstractEventLoop, asyncio.Future[None]] = {}
_parkings: dict[asyncio.AbstractEventLoop, Parking] = {}
# What a release delivers (``Parking.deliver`` hands it to each request's ``accepts``).
_RELEASED = object()


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
    """``GET /api/bench-floor/hold?wait=N``: held until ``POST /api/bench-floor/release``
    (or ``N`` seconds), watching for its client to leave as any held route must (one
    receive, as Starlette's ``StreamingResponse`` does), then a small JSON body."""
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


def _parking() -> Parking:
    return _parkings.setdefault(asyncio.get_running_loop(), Parking())


async def _rendered() -> list[Message]:
    """The body's messages, as the route's poll renders an answer once for every
    request: the body goes with ``more_body``, the request's own task ends it."""
    messages: list[Message] = []

    async def record(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "more_body": True}
        messages.append(message)

    await JSONResponse(BODY)({"type": "http"}, _never_receive, record)
    return messages


async def _never_receive() -> Message:  # pragma: no cover - a response never receives
    raise RuntimeError("a rendered response does not receive")


class HoldPass:
    """A raw ASGI endpoint: it keeps the ``send`` its host handed the route.

    ``GET /api/bench-floor/hold-pass?wait=N``, released by ``POST
    /api/bench-floor/release-pass``: the floor of the route's own way of answering a crowd
    (``delivery``). The requests park, and the release sends every one's response in one
    pass, each through its host's ``send``, from one body rendered once: what that costs is
    the host's middleware and the sockets alone, so no route answering through the host's
    stack can wake its crowd sooner."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def respond(released: object, rendered: dict[object, list[Message]]) -> None:
            messages = rendered.get("body")
            if messages is None:
                messages = rendered["body"] = await _rendered()
            for message in messages:
                await send(_own(message))

        parking = _parking()
        parked = Parked(accepts=lambda _: True, respond=respond)
        parking.park(parked)
        wait = float(QueryParams(scope["query_string"]).get("wait", "30"))
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait(
                (parked.woken, gone),
                timeout=wait,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            gone.cancel()
        if parked.answered is not None:
            await send(_own(END_OF_BODY))
            return
        parking.leave(parked)
        await JSONResponse(BODY)(scope, receive, send)


async def release_pass(request: Request) -> Response:
    await _parking().deliver(_RELEASED)  # type: ignore[arg-type]
    return Response(status_code=204)


def _host_app() -> object:
    module, _, attribute = os.environ["BENCH_HOST_APP"].partition(":")
    host = getattr(importlib.import_module(module), attribute)
    host.router.routes[:0] = [
        Route(HOLD_PATH, hold, methods=["GET"]),
        Route(RELEASE_PATH, release, methods=["POST"]),
        Route(PASS_HOLD_PATH, HoldPass(), methods=["GET"]),
        Route(PASS_RELEASE_PATH, release_pass, methods=["POST"]),
    ]
    return host


def __getattr__(name: str) -> object:
    # ``app`` is built when the server asks for it: the bench itself imports only the
    # paths above.
    if name == "app":
        return _host_app()
    raise AttributeError(name)
