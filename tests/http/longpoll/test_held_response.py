"""Held requests in a host app that took only ``final_answer_routes()`` (no front door, no
lifespan of ours): their poll still answers them all in one pass through the host's
``send``, seen by the host's middleware (a ``BaseHTTPMiddleware``, Starlette's CORS, a
recording one) as any other response, behind a real uvicorn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from langgraph_api.middleware.private_network import PrivateNetworkMiddleware
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evoscientist_final_answer import final_answer_routes
from evoscientist_final_answer.http.longpoll import held_response
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.http.longpoll.test_waiting import parked_waiters, reached, three_step_run, until
from tests.support.seeds import Seeder, route
from tests.support.servers import listening

pytestmark = pytest.mark.backends("sqlite")

ORIGIN = "http://webui.example"
HELD = 30


class Recording:
    """The host's own plain ASGI middleware: what each request sent, and whether its
    handling ended."""

    def __init__(self, app: ASGIApp, log: dict[int, list[Message]], ended: list[int]) -> None:
        self.app, self.log, self.ended = app, log, ended

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = self.log[id(scope)] = []

        async def recording(message: Message) -> None:
            sent.append(message)
            await send(message)

        await self.app(scope, receive, recording)
        self.ended.append(id(scope))


async def other(request: Request) -> PlainTextResponse:
    return PlainTextResponse("the host's own")


@asynccontextmanager
async def host(service: FinalAnswerService) -> AsyncIterator[tuple[str, Any]]:
    """The host app on a local port: its base URL and what its middleware recorded."""
    log: dict[int, list[Message]] = {}
    ended: list[int] = []
    app = Starlette(
        middleware=[
            Middleware(Recording, log=log, ended=ended),
            Middleware(PrivateNetworkMiddleware),
            Middleware(CORSMiddleware, allow_origins=[ORIGIN], allow_methods=["*"]),
        ],
        routes=[*final_answer_routes(lambda: service), Route("/api/other", other)],
    )
    async with listening(app) as port:
        yield f"http://127.0.0.1:{port}", (log, ended)


async def test_the_poll_answers_a_host_apps_held_requests_rendering_once(
    seeder: Seeder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    renders: list[str] = []
    render = held_response.answer_response

    def counted(answer: Any, query: Any, representation: str, if_none_match: Any) -> Any:
        renders.append(representation)
        return render(answer, query, representation, if_none_match)

    monkeypatch.setattr(held_response, "answer_response", counted)
    caplog.set_level(logging.WARNING)
    service = FinalAnswerService(seeder.store.reader(), None)
    origins = [ORIGIN if i % 3 else None for i in range(HELD)]
    try:
        async with (
            three_step_run(seeder) as run,
            host(service) as (base, (log, ended)),
            httpx.AsyncClient(base_url=base, timeout=30) as client,
        ):
            url = f"{route(run.thread.thread_id)}?wait=20"
            requests = [
                asyncio.create_task(client.get(url, headers={"Origin": o} if o else {}))
                for o in origins
            ]
            # Parked: from now on the poll answers them (without the host's ``send``
            # each request would wait on its own and answer for itself).
            await until(lambda: parked_waiters(service) == HELD)
            await run.finish()
            responses = await asyncio.wait_for(asyncio.gather(*requests), 10)
            assert (await client.get("/api/other")).text == "the host's own"
            await until(lambda: len(ended) == HELD + 1)
    finally:
        await service.close()

    assert renders == ["json"]  # one answer, one representation: rendered once for all
    for origin, response in zip(origins, responses, strict=True):
        assert response.status_code == 200
        assert response.json()["content"] == "the final answer"
        assert response.headers["content-length"] == str(len(response.content))
        # The host's CORS middleware ran for each response on its own copy of the
        # headers: the right origin, and ``Vary`` not repeated by the others.
        assert response.headers.get("access-control-allow-origin") == (origin and ORIGIN)
        assert response.headers["vary"] == "Origin"
    answered = [sent for sent in log.values() if sent[0].get("status") == 200][:HELD]
    for sent in answered:
        # The body goes out with the poll's pass; the response ends from its own task.
        assert [m["type"] for m in sent] == [
            "http.response.start",
            "http.response.body",
            "http.response.body",
        ]
        assert sent[1]["more_body"] is True and sent[2] == held_response.END_OF_BODY
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_client_gone_while_held_in_a_host_app_leaves_and_the_rest_are_answered(
    seeder: Seeder,
) -> None:
    service = FinalAnswerService(seeder.store.reader(), None)
    try:
        async with three_step_run(seeder) as run, host(service) as (base, _):
            url = f"{base}{route(run.thread.thread_id)}?wait=20"
            async with httpx.AsyncClient(timeout=30) as staying:
                kept = [asyncio.create_task(staying.get(url)) for _ in range(2)]
                async with httpx.AsyncClient(timeout=30) as leaving:
                    gone = asyncio.create_task(leaving.get(url))
                    await until(lambda: parked_waiters(service) == 3)
                    gone.cancel()
                await until(lambda: parked_waiters(service) == 2)
                await run.finish()
                responses = await asyncio.wait_for(asyncio.gather(*kept), 10)
    finally:
        await service.close()
    assert [r.json()["content"] for r in responses] == ["the final answer"] * 2


async def test_each_representation_and_validator_gets_its_own_response_in_a_host_app(
    seeder: Seeder,
) -> None:
    """Text, JSON, HEAD and a stale ``If-None-Match``: one pass, each as asked.

    The stale validator takes any change, not only the run's end: the run is first
    brought to its last step, so the final commit is the one change left to see (with
    all three steps ahead, the poll may read "step one" and rightly answer it alone)."""
    service = FinalAnswerService(seeder.store.reader(), None)
    try:
        async with (
            three_step_run(seeder) as run,
            host(service) as (base, _),
            httpx.AsyncClient(base_url=base, timeout=30) as client,
        ):
            run.gates[0].set()
            run.gates[1].set()
            await reached(run.thread, ("three",))
            path = route(run.thread.thread_id)
            etag = (await client.get(path)).headers["etag"]
            asks = [
                client.get(path, params={"wait": 20, "format": "text"}),
                client.get(path, params={"wait": 20}, headers={"If-None-Match": etag}),
                client.head(path, params={"wait": 20}),
                client.get(path, params={"wait": 20}),
            ]
            requests = [asyncio.create_task(ask) for ask in asks]
            await until(lambda: parked_waiters(service) == len(asks))
            await run.finish()
            text, stale, head, plain = await asyncio.wait_for(asyncio.gather(*requests), 10)
    finally:
        await service.close()
    assert text.text == "the final answer"
    assert text.headers["content-type"].startswith("text/plain")
    assert stale.status_code == 200 and stale.headers["etag"] != etag
    assert head.status_code == 200 and head.content == b""
    assert head.headers["etag"] == plain.headers["etag"] == stale.headers["etag"]
    assert plain.json()["content"] == "the final answer"
