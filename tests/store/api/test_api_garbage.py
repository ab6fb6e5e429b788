"""The standalone app's API fallback against an API that answers junk.

The fallback API is a real HTTP server on a local port (uvicorn) that answers what a
broken proxy or a wrong ``EVOSCIENTIST_LANGGRAPH_URL`` may: HTML with a 200, JSON of
the wrong shape, a huge list. The route must answer 503 ``store_unavailable`` in the
documented shape, never a 500, and never pass the junk on as an answer.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.server.fallback import FallbackApi
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import AGENT_NAME, route, uuid_thread_id
from tests.support.servers import listening

THREAD = uuid_thread_id()


def running_state(**changes: Any) -> dict[str, Any]:
    """A thread state as langgraph-api gives it, mid-run."""
    state: dict[str, Any] = {
        "values": {
            "messages": [
                {"type": "human", "content": "question", "id": "h1"},
                {"type": "ai", "content": "partial answer", "id": "a1"},
            ]
        },
        "next": ["agent"],
        "tasks": [{"id": "t1", "name": "agent", "error": None, "interrupts": []}],
        "metadata": {"run_id": "run-1"},
        "checkpoint": {"thread_id": THREAD, "checkpoint_ns": "", "checkpoint_id": "c1"},
        "created_at": "2026-11-30T10:00:00+00:00",
        "interrupts": [],
    }
    state.update(changes)
    return state


def thread_record(status: str = "busy") -> dict[str, Any]:
    return {"thread_id": THREAD, "status": status, "metadata": {}, "values": {}}


class FakeApi:
    """What each endpoint answers, and how often it was asked."""

    def __init__(self) -> None:
        self.thread: Callable[[], Response] = lambda: JSONResponse(thread_record())
        self.state: Callable[[], Response] = lambda: JSONResponse(running_state())
        self.calls: Counter[str] = Counter()

    def app(self) -> Starlette:
        async def search(request: Request) -> Response:
            # The reader asks a thread's status by a search: the record, in a list.
            self.calls["thread"] += 1
            answer = self.thread()
            try:
                record = json.loads(bytes(answer.body))
            except ValueError:
                return answer
            return JSONResponse([record]) if isinstance(record, dict) else answer

        async def state(request: Request) -> Response:
            self.calls["state"] += 1
            return self.state()

        return Starlette(
            routes=[
                Route("/threads/search", search, methods=["POST"]),
                Route("/threads/{thread_id}/state", state),
            ]
        )


@asynccontextmanager
async def fallback_app(tmp_path: Path, api: FakeApi) -> AsyncIterator[httpx.AsyncClient]:
    """The standalone app, its ``sessions.db`` missing, falling back to ``api``."""
    async with listening(api.app()) as port:
        reader = ApiAnswerReader(f"http://127.0.0.1:{port}")
        service = FinalAnswerService(
            SqliteAnswerReader(tmp_path / "data" / "sessions.db", AGENT_NAME),
            reader,
            server=FallbackApi(reader),
        )
        app = create_app(lambda: service)
        # Today's failures are 500s, not exceptions in the test.
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                yield client
        finally:
            await service.close()


HUGE_LIST = json.dumps(list(range(1_500_000))).encode()

JUNK: dict[str, tuple[str, Callable[[], Response]]] = {
    "HTML with a 200": ("thread", lambda: HTMLResponse("<html><body>Proxy login</body></html>")),
    "a thread that is a list": ("thread", lambda: JSONResponse([THREAD, "busy"])),
    "a thread with a made-up status": ("thread", lambda: JSONResponse(thread_record("dancing"))),
    "a state that is a string": ("state", lambda: JSONResponse("values")),
    "a state that is a 1.5M-item list": (
        "state",
        lambda: Response(HUGE_LIST, media_type="application/json"),
    ),
    "interrupts that are a string": (
        "state",
        lambda: JSONResponse(running_state(interrupts="abc", next=[])),
    ),
    "task interrupts that are a string": (
        "state",
        lambda: JSONResponse(
            running_state(tasks=[{"id": "t", "name": "agent", "interrupts": "abc"}])
        ),
    ),
    "a run id that is a list": (
        "state",
        lambda: JSONResponse(running_state(metadata={"run_id": ["weird"]})),
    ),
    "messages that are numbers": (
        "state",
        lambda: JSONResponse(running_state(values={"messages": [1, 2, 3]})),
    ),
    "a checkpoint that is a string": (
        "state",
        lambda: JSONResponse(running_state(checkpoint="c1")),
    ),
}


@pytest.mark.parametrize("case", list(JUNK))
async def test_junk_from_the_api_is_a_503_in_the_documented_shape(
    tmp_path: Path, case: str
) -> None:
    endpoint, junk = JUNK[case]
    api = FakeApi()
    setattr(api, endpoint, junk)
    async with fallback_app(tmp_path, api) as client:
        response = await client.get(route(THREAD))
    assert response.status_code == 503, response.text[:300]
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["error"] == {
        "code": "store_unavailable",
        "message": body["detail"],
        "retryable": True,
    }
    assert api.calls[endpoint] >= 1  # the junk was really served


async def test_a_sane_api_still_answers(tmp_path: Path) -> None:
    async with fallback_app(tmp_path, FakeApi()) as client:
        response = await client.get(route(THREAD))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["source"] == "api" and body["status"] == "running"
    assert body["content"] == "partial answer" and body["run_id"] == "run-1"


async def test_api_only_waiters_share_one_poll(tmp_path: Path) -> None:
    """Twenty long-polls on a thread only the API can answer ask it as often as one."""
    api = FakeApi()
    async with fallback_app(tmp_path, api) as client:
        responses = await asyncio.gather(
            *(client.get(route(THREAD), params={"wait": 1}) for _ in range(20))
        )
    assert {r.json()["status"] for r in responses} == {"running"}
    # One poll every 100 ms for about a second; twenty separate polls would be ~200.
    assert api.calls["state"] <= 20, api.calls


async def test_a_fallback_api_that_holds_the_run_vouches_for_it(tmp_path: Path) -> None:
    """The state was written months ago, past the silence bound. A fallback API that
    says the thread is busy still runs it, so it is not lost; one that says idle
    stopped it with work left."""
    busy, idle = FakeApi(), FakeApi()
    idle.thread = lambda: JSONResponse(thread_record("idle"))
    for api in (busy, idle):
        api.state = lambda: JSONResponse(running_state(created_at="2026-01-01T00:00:00+00:00"))
    async with fallback_app(tmp_path, busy) as client:
        assert (await client.get(route(THREAD))).json()["status"] == "running"
    async with fallback_app(tmp_path, idle) as client:
        body = (await client.get(route(THREAD))).json()
    assert body["status"] == "error", body
    assert body["error"]["code"] == "run_stopped"
    assert body["content"] == "partial answer"
