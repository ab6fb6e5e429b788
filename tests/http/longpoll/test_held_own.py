"""Each held answer is its own response: through any host middleware (GZip, CORS, a
request id), with messages of its own and in its own request's context, behind a real
uvicorn, for the route-only host and the complete app with its front door closed and open.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import ssl
import sys
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evoscientist_final_answer import final_answer_routes
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.longpoll.held_response import HeldResponse
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.http.longpoll.test_front_door import transparent_stack
from tests.http.longpoll.test_waiting import parked_waiters, three_step_run, until
from tests.support.seeds import Seeder, route
from tests.support.servers import listening

pytestmark = pytest.mark.backends("sqlite")

ORIGIN = "http://webui.example"
ELSEWHERE = "http://elsewhere.example"
WAKES = 3
# Longer than any pause between two wakes: a connection the server closes is one it
# gave up on, never an idle one timing out.
KEEP_ALIVE = 60.0
# What may differ between a held response and a plain one: a held body goes out with
# ``more_body``, which GZip streams (chunked, no ``Content-Length``).
# The request's own ids are checked on their own.
UNCOMPARED = {"date", "x-request-id", "x-passed", "content-length", "transfer-encoding"}

REQUEST_ID: ContextVar[str | None] = ContextVar("test_request_id", default=None)


class RequestId:
    """Takes the request's id when it comes in and stamps it on the response from its
    ``send``, as asgi-correlation-id does: in place, from a context variable."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        REQUEST_ID.set(Headers(scope=scope).get("x-request-id"))

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("X-Request-ID", REQUEST_ID.get() or "")
            await send(message)

        await self.app(scope, receive, stamped)


class Passing(BaseHTTPMiddleware):
    """Adds a header of the request's to the response it is handed, in place (as a
    ``Server-Timing`` middleware appends its entry)."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await call_next(request)
        response.headers.append("X-Passed", request.headers.get("x-request-id") or "")
        return response


class Connections:
    """Outermost: the client port each request id came in on."""

    def __init__(self, app: ASGIApp, ports: dict[str, int]) -> None:
        self.app, self.ports = app, ports

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request_id = Headers(scope=scope).get("x-request-id")
            if request_id is not None:
                self.ports[request_id] = scope["client"][1]
        await self.app(scope, receive, send)


GZIP = Middleware(GZipMiddleware, minimum_size=0)
CORS = Middleware(CORSMiddleware, allow_origins=[ORIGIN], allow_methods=["*"])
# Outermost first, with the requests held per wake. Stacked, the request-id
# middleware is inside the task boundary of ``BaseHTTPMiddleware``: its ``send`` is the
# one the poll calls.
STACKS = {
    "gzip": ([GZIP], 50),
    "cors": ([CORS], 50),
    "base_http": ([Middleware(Passing)], 50),
    "request_id": ([Middleware(RequestId)], 50),
    "stacked": ([CORS, Middleware(Passing), Middleware(RequestId), GZIP], 150),
}
HOSTS = ["route_only", "complete_app", "complete_app_front_door"]


@dataclass(frozen=True)
class Ask:
    """One request's kind; client ``k`` asks ``asks(w, ...)[k]`` in wake ``w``."""

    method: str
    format: str
    encoding: str
    origin: str | None

    def headers(self, request_id: str) -> dict[str, str]:
        headers = {"Accept-Encoding": self.encoding, "X-Request-ID": request_id}
        if self.origin is not None:
            headers["Origin"] = self.origin
        return headers


def asks(wake: int, held: int) -> list[Ask]:
    """Every method, representation, encoding and origin mixed; each client switches
    encoding from one wake to the next."""
    return [
        Ask(
            "HEAD" if k % 10 == 9 else "GET",
            ("json", "text")[k // 2 % 2],
            ("gzip", "identity")[(k + wake) % 2],
            (ORIGIN, ELSEWHERE, None)[k % 3],
        )
        for k in range(held)
    ]


def open_front_door(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's modules stood in for, as in ``test_front_door``: the door opens."""
    config = SimpleNamespace(HTTP_CONFIG={}, MOUNT_PREFIX=None)
    server = SimpleNamespace(global_middleware=transparent_stack())
    monkeypatch.setitem(sys.modules, "langgraph_api.server", server)
    monkeypatch.setitem(sys.modules, "langgraph_api.config", config)


def host_app(host: str, service: FinalAnswerService, middleware: list[Middleware]) -> Starlette:
    if host == "route_only":
        return Starlette(routes=[*final_answer_routes(lambda: service)], middleware=middleware)
    return Starlette(routes=[Mount("/", app=create_app(lambda: service))], middleware=middleware)


@contextmanager
def server_errors() -> Iterator[list[logging.LogRecord]]:
    """What uvicorn logs at warning and above (its own logger does not propagate to
    pytest's); attached once the server's config has set its loggers up."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


@asynccontextmanager
async def clients(base: str, count: int) -> AsyncIterator[list[httpx.AsyncClient]]:
    """``count`` clients of one keep-alive connection each (one TLS context for all:
    none is used, and making one each is slow)."""
    tls = ssl.create_default_context()
    limits = httpx.Limits(max_connections=1, keepalive_expiry=KEEP_ALIVE)
    made = [
        httpx.AsyncClient(base_url=base, timeout=30, limits=limits, verify=tls)
        for _ in range(count)
    ]
    try:
        yield made
    finally:
        await asyncio.gather(*(client.aclose() for client in made))


def own_failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    """A held response the route could not send or end (logged at debug)."""
    return [r.getMessage() for r in caplog.records if "could not be" in r.getMessage()]


@pytest.mark.parametrize("stack", list(STACKS))
@pytest.mark.parametrize("host", HOSTS)
async def test_every_held_answer_is_its_own_response(
    seeder: Seeder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    host: str,
    stack: str,
) -> None:
    """Middleware writes into the messages it is given (GZip its body and trailer, CORS and
    a request-id middleware their headers) and reads context variables in its ``send``: a
    message shared between two responses would carry one's writes into the other, and
    responses sent in the poll's context would all carry the id of the request that
    started it. Behind each middleware alone 50 requests are held per wake, behind all of
    it stacked 150, over ``WAKES`` runs, each on a keep-alive connection of its own that
    the next wake reuses with the other encoding; every response is compared with a plain
    request's, and uvicorn's log must stay empty."""
    if host == "complete_app_front_door":
        open_front_door(monkeypatch)
    caplog.set_level(logging.DEBUG, logger="evoscientist_final_answer.http.longpoll")
    service = FinalAnswerService(seeder.store.reader(), None)
    ports: dict[str, int] = {}
    middleware, count = STACKS[stack]
    app = host_app(host, service, [Middleware(Connections, ports=ports), *middleware])
    stamps, passes = stack in ("request_id", "stacked"), stack in ("base_http", "stacked")
    try:
        async with (
            listening(app, timeout_keep_alive=KEEP_ALIVE) as port,
            clients(f"http://127.0.0.1:{port}", count + 1) as (plain, *held),
        ):
            with server_errors() as errors:
                for wake in range(WAKES):
                    wanted = asks(wake, count)
                    async with three_step_run(seeder) as run:
                        path = route(run.thread.thread_id)
                        requests = [
                            asyncio.create_task(
                                client.request(
                                    ask.method,
                                    path,
                                    params={"wait": 20, "format": ask.format},
                                    headers=ask.headers(f"w{wake}-c{k}"),
                                )
                            )
                            for k, (client, ask) in enumerate(zip(held, wanted, strict=True))
                        ]
                        await until(lambda: parked_waiters(service) == count, 15)
                        await run.finish()
                        responses = await asyncio.wait_for(asyncio.gather(*requests), 15)
                    expected = {
                        ask: await plain.request(
                            ask.method,
                            path,
                            params={"format": ask.format},
                            headers=ask.headers(f"plain-{wake}"),
                        )
                        for ask in dict.fromkeys(wanted)
                    }
                    for k, (ask, response) in enumerate(zip(wanted, responses, strict=True)):
                        alone = expected[ask]
                        assert response.status_code == alone.status_code == 200, (k, ask)
                        assert response.content == alone.content, (k, ask)
                        if ask.method == "GET":
                            assert b"the final answer" in response.content
                        mine = {n: v for n, v in response.headers.items() if n not in UNCOMPARED}
                        theirs = {n: v for n, v in alone.headers.items() if n not in UNCOMPARED}
                        assert mine == theirs, (k, ask)
                        if ask.encoding == "identity" and ask.method == "GET":
                            assert response.headers["content-length"] == str(len(response.content))
                        own_id = f"w{wake}-c{k}"
                        assert response.headers.get("x-request-id") == (own_id if stamps else None)
                        assert response.headers.get("x-passed") == (own_id if passes else None)
                        # The connection the first wake opened: none was closed on it.
                        assert ports[f"w{wake}-c{k}"] == ports[f"w0-c{k}"], (k, ask)
    finally:
        await service.close()
    assert not errors, [r.getMessage() for r in errors]
    assert not own_failures(caplog)


class Marker:
    """Something of one request's, to follow with a weakref."""


MARK: ContextVar[Marker] = ContextVar("test_mark")


class Marking:
    """A host middleware that keeps something of each request in a context variable."""

    def __init__(self, app: ASGIApp, marks: list[weakref.ref[Any]]) -> None:
        self.app, self.marks = app, marks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            marker = Marker()
            self.marks.append(weakref.ref(marker))
            MARK.set(marker)
            del marker  # held by the request's context alone
        await self.app(scope, receive, send)


async def test_a_poll_keeps_nothing_of_the_request_that_started_it(seeder: Seeder) -> None:
    """Outside langgraph's server: its first request answered, the poll goes on for
    the others without that request's context (its middleware's values: here a
    marker, elsewhere a request id, a tracing span). Inside, the poll reads as that
    caller, in a copy of its context (``waiting._poll_context``)."""
    service = FinalAnswerService(seeder.store.reader(), None)
    marks: list[weakref.ref[Any]] = []
    app = Starlette(
        routes=[*final_answer_routes(lambda: service)],
        middleware=[Middleware(Marking, marks=marks)],
    )

    def first_gone() -> bool:
        gc.collect()
        return marks[0]() is None

    try:
        async with (
            three_step_run(seeder) as run,
            listening(app) as port,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
        ):
            path = route(run.thread.thread_id)
            # ``close``: uvicorn arms no keep-alive timer, whose handle would hold a
            # copy of the request's context for its 5 s (uvicorn's, not the poll's).
            first = asyncio.create_task(
                client.get(path, params={"wait": 1}, headers={"Connection": "close"})
            )
            await until(lambda: parked_waiters(service) == 1)
            staying = asyncio.create_task(client.get(path, params={"wait": 20}))
            await until(lambda: parked_waiters(service) == 2)
            assert (await first).json()["complete"] is False  # its time ran out
            assert parked_waiters(service) == 1 and service.long_polls.active == 1
            await until(first_gone)
            await run.finish()
            assert (await staying).json()["content"] == "the final answer"
    finally:
        await service.close()


async def test_a_head_and_a_get_each_get_their_own_render(
    seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The render is shared by the requests that would render the same: never a HEAD's
    with a GET's (Starlette renders them alike today; the server drops a HEAD's body)."""
    rendered: list[str] = []
    render = HeldResponse._render

    async def counted(self: HeldResponse, answer: Any) -> list[Message]:
        rendered.append(self.request.method)
        return await render(self, answer)

    monkeypatch.setattr(HeldResponse, "_render", counted)
    service = FinalAnswerService(seeder.store.reader(), None)
    app = Starlette(routes=[*final_answer_routes(lambda: service)])
    try:
        async with (
            three_step_run(seeder) as run,
            listening(app) as port,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
        ):
            path = route(run.thread.thread_id)
            methods = ["HEAD", "GET", "HEAD", "GET"]
            requests = [
                asyncio.create_task(client.request(method, path, params={"wait": 20}))
                for method in methods
            ]
            await until(lambda: parked_waiters(service) == len(methods))
            await run.finish()
            responses = await asyncio.wait_for(asyncio.gather(*requests), 10)
            alone = await client.get(path)
    finally:
        await service.close()
    assert sorted(rendered) == ["GET", "HEAD"]
    for method, response in zip(methods, responses, strict=True):
        assert response.status_code == 200
        assert response.headers["content-length"] == alone.headers["content-length"]
        assert response.content == (alone.content if method == "GET" else b"")
