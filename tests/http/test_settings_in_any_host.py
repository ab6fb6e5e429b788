"""A setting the route cannot use, in a host that took only ``final_answer_routes()``
(no start-up check of ours): every route request answers the documented JSON 503
``misconfigured`` naming the variable, logged once; the host's other routes are
untouched (``http/loop_services.py``). Also inside a real ``langgraph dev`` serving the
demo's routes as upstream adopts them (``routes_only_app``)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from evoscientist_final_answer import final_answer_routes
from tests.support.host_checkpointer import HOST_DB_VARIABLE
from tests.support.servers import langgraph_dev

# (variable, value, a word of what the message says it accepts)
MISTYPED = [
    ("EVOSCIENTIST_RUN_SILENCE_SECONDS", "30s", "number of seconds"),
    ("EVOSCIENTIST_RUN_SILENCE_SECONDS", "nan", "number of seconds"),
    ("EVOSCIENTIST_RUN_SILENCE_SECONDS", "-1", "number of seconds"),
    ("EVOSCIENTIST_MAX_HELD_REQUESTS", "many", "whole number"),
    ("EVOSCIENTIST_GC_TUNING", "maybe", "1 or 0"),
    ("EVOSCIENTIST_DATABASE_URI", "mysql://db/x", "postgresql://"),
    ("EVOSCIENTIST_LANGGRAPH_URL", "ftp://example", "http(s)://"),
    ("EVOSCIENTIST_LANGGRAPH_URL", "http://", "http(s)://"),
    ("EVOSCIENTIST_READ_FROM", "remote", "'store' or 'api'"),
    ("EVOSCIENTIST_READ_FROM", "api", "needs EVOSCIENTIST_LANGGRAPH_URL"),
]
# Blank is unset: the default, never an error.
BLANK = [
    "EVOSCIENTIST_RUN_SILENCE_SECONDS",
    "EVOSCIENTIST_LANGGRAPH_URL",
    "EVOSCIENTIST_GC_TUNING",
    "EVOSCIENTIST_READ_FROM",
]


async def hosts_own(request: Request) -> PlainTextResponse:
    return PlainTextResponse("the host's own")


@pytest.fixture
async def host(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(db_path.parent))
    app = Starlette(routes=[*final_answer_routes(), Route("/api/other", hosts_own)])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://host") as client:
        yield client


def final_answer(thread_id: str | None = None) -> str:
    return f"/api/threads/{thread_id or uuid.uuid4()}/final-answer"


@pytest.mark.parametrize(("variable", "value", "accepts"), MISTYPED)
async def test_a_mistyped_setting_is_a_json_503_naming_it(
    host: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    variable: str,
    value: str,
    accepts: str,
) -> None:
    monkeypatch.delenv("EVOSCIENTIST_LANGGRAPH_URL", raising=False)
    monkeypatch.setenv(variable, value)
    caplog.set_level(logging.ERROR, logger="evoscientist_final_answer")
    answers = [await host.get(final_answer()) for _ in range(3)]
    answers.append(await host.get(final_answer(), params={"wait": 5}))
    for response in answers:
        assert response.status_code == 503
        assert response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert error["code"] == "misconfigured" and error["retryable"] is False
        assert variable in error["message"] and accepts in error["message"]
        assert response.json()["detail"] == error["message"]
    assert (await host.get("/api/other")).text == "the host's own"
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(logged) == 1 and variable in logged[0].getMessage()  # once, not per request


@pytest.mark.parametrize("variable", BLANK)
async def test_a_blank_setting_is_its_default(
    host: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "  ")
    response = await host.get(final_answer())
    assert response.status_code == 503  # no sessions.db yet: the store, not the setting
    assert response.json()["error"]["code"] == "store_unavailable"


async def test_the_route_serves_once_the_setting_is_fixed(
    host: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVOSCIENTIST_GC_TUNING", "maybe")
    assert (await host.get(final_answer())).json()["error"]["code"] == "misconfigured"
    monkeypatch.delenv("EVOSCIENTIST_GC_TUNING")
    assert (await host.get(final_answer())).json()["error"]["code"] == "store_unavailable"


@pytest.mark.e2e
def test_inside_langgraph_dev_the_route_only_host_answers_misconfigured(tmp_path: Path) -> None:
    variable = "EVOSCIENTIST_RUN_SILENCE_SECONDS"
    with langgraph_dev(
        tmp_path / "work",
        tmp_path / "data",
        app="EvoScientist.langgraph_dev.http:routes_only_app",
        # A host's own checkpointer, as upstream's: it checks none of our settings (the
        # demo's would refuse to start).
        checkpointer_path="tests/support/host_checkpointer.py:checkpointer",
        env={variable: "30s", HOST_DB_VARIABLE: str(tmp_path / "host.db")},
    ) as server:
        thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
        response = httpx.get(f"{server.url}{final_answer(thread)}")
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "misconfigured"
        assert variable in response.json()["error"]["message"]
        assert httpx.get(f"{server.url}/api/models").status_code == 200
        assert httpx.get(f"{server.url}/ok").status_code == 200
        httpx.get(f"{server.url}{final_answer(thread)}")
        logged = [line for line in server.log().splitlines() if variable in line]
        assert len(logged) == 1, logged
