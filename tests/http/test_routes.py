"""The adoption API (``evoscientist_final_answer.http.routes``): ``final_answer_routes()``
in a host app of someone else's, as upstream EvoScientist's ``_build_app()`` takes it —
``routes=[*final_answer_routes(), ...]`` and nothing more.

The host's ``request.app`` is its own, its state has no key of ours, its middleware runs
and no lifespan or front door of ours does; importing the package and building the
routes change nothing global."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evoscientist_final_answer import final_answer_routes
from evoscientist_final_answer.http.openapi import OPENAPI_PATH
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.http.longpoll.test_waiting import count_calls, three_step_run, until
from tests.support.seeds import Seeder, route
from tests.support.servers import REPO, listening

HOST_HEADER = "x-host-boundary"
HOST_MODELS = {"models": ["the host's own"]}
WAITERS = 200

# Run in a fresh interpreter: what importing the package and building the routes leave
# behind (Starlette's URL convertors, every logger's filters, apps built, modules loaded).
PROBE = """
import json, logging, sys
import starlette.applications, starlette.convertors
built = []
original = starlette.applications.Starlette.__init__
def counting(self, *args, **kwargs):
    built.append(1)
    original(self, *args, **kwargs)
starlette.applications.Starlette.__init__ = counting

def filters():
    loggers = [logging.getLogger()] + [
        logging.getLogger(name) for name in list(logging.root.manager.loggerDict)
    ]
    return sorted(f"{l.name}:{type(f).__name__}" for l in loggers for f in l.filters)

convertors, logged = sorted(starlette.convertors.CONVERTOR_TYPES), filters()
import evoscientist_final_answer
imported = {
    "convertors": sorted(starlette.convertors.CONVERTOR_TYPES) == convertors,
    "filters": filters() == logged,
    "apps": len(built),
}
from evoscientist_final_answer import final_answer_routes
routes = final_answer_routes()
print(json.dumps({
    "imported": imported,
    "convertors": sorted(starlette.convertors.CONVERTOR_TYPES) == convertors,
    "filters": filters() == logged,
    "apps": len(built),
    "complete_app_loaded": "evoscientist_final_answer.http.app" in sys.modules,
    "paths": [r.path for r in routes],
}))
"""


def test_importing_and_building_the_routes_changes_nothing_global() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    assert facts["imported"] == {"convertors": True, "filters": True, "apps": 0}
    assert facts["convertors"] is True  # no ``any_text`` in Starlette's shared table
    assert facts["filters"] is True  # no logging filter until the route serves
    assert facts["apps"] == 0
    assert facts["complete_app_loaded"] is False
    # Only ours: anything more would shadow the host's routes that follow.
    assert facts["paths"] == [OPENAPI_PATH, "/api/threads/{thread_id}/final-answer"]


class HostBoundary:
    """The host's own middleware (as upstream's ``BrowserBoundary`` wraps every route):
    marks each response and records the app each request was served by."""

    def __init__(self, app: ASGIApp, seen: list[Any]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.seen.append(scope.get("app"))

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], (HOST_HEADER.encode(), b"1")]
            await send(message)

        await self.app(scope, receive, marked)


async def host_models(request: Request) -> Response:
    return JSONResponse({**HOST_MODELS, "state": request.app.state.host_setting})


def host_app(seen: list[Any], **routes_options: Any) -> Starlette:
    """A host as upstream's ``_build_app()`` is: its lifespan, its middleware, its own
    ``/api/models`` and state, and our routes first."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield

    app = Starlette(
        lifespan=lifespan,
        middleware=[Middleware(HostBoundary, seen=seen)],
        routes=[
            *final_answer_routes(**routes_options),
            Route("/api/models", host_models, methods=["GET"]),
        ],
    )
    app.state.host_setting = "kept"
    return app


async def test_a_host_app_serves_the_route_through_its_own_middleware(
    seeder: Seeder, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default factory, as a host calls it: the store the environment names."""
    monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(db_path.parent))
    monkeypatch.delenv("EVOSCIENTIST_LANGGRAPH_URL", raising=False)
    thread = await seeder.agent(("Adopted?",))
    expected = await thread.expected()
    seen: list[Any] = []
    app = host_app(seen)
    async with listening(app) as port, httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as h:
        response = await h.get(route(thread.thread_id))
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["content"] == expected and body["complete"] is True
        assert body["source"] == "checkpointer"
        assert response.headers[HOST_HEADER] == "1"  # the host's middleware ran
        assert seen[-1] is app  # request.app is the host's, with no state of ours

        text = await h.get(route(thread.thread_id), params={"format": "text", "wait": 5})
        assert text.status_code == 200 and text.text == expected

        unknown = await h.get(route("no-such-thread"))
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "thread_not_found"

        models = await h.get("/api/models")  # the host's, not shadowed by ours
        assert models.json() == {**HOST_MODELS, "state": "kept"}
        assert models.headers[HOST_HEADER] == "1"
        assert (await h.get(OPENAPI_PATH)).status_code == 200
    assert not hasattr(app.state, "final_answer_service")


@pytest.mark.backends("sqlite", "postgres")
async def test_held_polls_in_a_host_share_one_poll_and_all_wake(seeder: Seeder) -> None:
    """No front door, no lifespan of ours: the long-polls of a host's route still share
    one poll per thread, and every one of them answers the final answer."""
    reader = seeder.store.reader()
    heads = count_calls(reader, "head")
    service = FinalAnswerService(reader, None)
    app = host_app([], service_factory=lambda: service)
    try:
        async with (
            three_step_run(seeder) as run,
            listening(app) as port,
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                timeout=30,
                limits=httpx.Limits(max_connections=WAITERS + 10),
            ) as client,
        ):
            path = route(run.thread.thread_id)
            held = [
                asyncio.create_task(client.get(path, params={"wait": 20})) for _ in range(WAITERS)
            ]
            await until(lambda: service.long_polls.held.count == WAITERS, 15)
            for gate in run.gates:
                gate.set()
            await run.task
            responses = await asyncio.wait_for(asyncio.gather(*held), 15)
    finally:
        await service.close()
    bodies = [r.json() for r in responses]
    assert all(r.headers[HOST_HEADER] == "1" for r in responses)
    assert {(b["content"], b["complete"]) for b in bodies} == {("the final answer", True)}
    assert heads[0] < WAITERS // 10, heads[0]  # one poll's reads, not one per waiter
