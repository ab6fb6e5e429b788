"""The Python complete app as a sidecar (``EVOSCIENTIST_READ_FROM=api``) of a server that
takes no custom routes of ours, with the caller's credentials passed on: tried on
LangGraph's JavaScript server with a custom auth handler (tests/jsserver/src/auth.ts:
a bearer token names the user, who sees only their own threads). The contract cases
without auth run on the sidecar in tests/js/test_js_server.py.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from tests.support import js_server
from tests.support.contract_graph import GRAPH_ID, SLOW, answer_for
from tests.support.route_contract import WAIT_WITHIN_S, visible
from tests.support.sidecar import Sidecar, sidecar

pytestmark = pytest.mark.e2e

Q = "What is a control group?"
ALICE = {"Authorization": "Bearer alice"}
BOB = {"Authorization": "Bearer bob"}
STRANGER = {"Authorization": "Bearer mallory"}


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[js_server.JsServer]:
    js_server.installed()
    root = tmp_path_factory.mktemp("js-auth")
    with js_server.js_server(root / "js", config=js_server.AUTH_CONFIG) as server:
        yield server


@pytest.fixture(scope="module")
def side(
    auth_server: js_server.JsServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Sidecar]:
    with sidecar(auth_server.url, tmp_path_factory.mktemp("sidecar")) as app:
        yield app


@pytest.fixture
async def alice(auth_server: js_server.JsServer) -> AsyncIterator[LangGraphClient]:
    client = get_client(url=auth_server.url, api_key=None, headers=ALICE)
    try:
        yield client
    finally:
        await client.aclose()


async def _ask(client: LangGraphClient, question: str, *, wait: bool = True) -> tuple[str, str]:
    thread_id = (await client.threads.create())["thread_id"]
    run = await client.runs.create(
        thread_id, GRAPH_ID, input={"messages": [{"role": "human", "content": question}]}
    )
    if wait:
        await client.runs.join(thread_id, run["run_id"])
    return thread_id, run["run_id"]


def _route(base: str, thread_id: str) -> str:
    return f"{base}/api/threads/{thread_id}/final-answer"


def _without_server_fields(body: dict[str, Any]) -> dict[str, Any]:
    # Each server writes its own timestamps' form and names its own source.
    return {k: v for k, v in body.items() if k not in ("source", "completed_at", "updated_at")}


async def test_the_owner_reads_the_answer_the_js_route_gives(
    auth_server: js_server.JsServer, side: Sidecar, alice: LangGraphClient
) -> None:
    thread_id, run_id = await _ask(alice, Q)
    async with httpx.AsyncClient(headers=ALICE) as http:
        sidecar_answer = await http.get(_route(side.url, thread_id))
        route_answer = await http.get(_route(auth_server.url, thread_id))
    assert sidecar_answer.status_code == 200, sidecar_answer.text
    body = sidecar_answer.json()
    assert (body["status"], body["complete"], body["run_id"]) == ("success", True, run_id)
    assert body["content"] == visible(answer_for(Q))
    assert _without_server_fields(body) == _without_server_fields(route_answer.json())


async def test_another_user_is_told_not_found_as_for_an_unknown_thread(
    auth_server: js_server.JsServer, side: Sidecar, alice: LangGraphClient
) -> None:
    thread_id, run_id = await _ask(alice, Q)
    async with httpx.AsyncClient(headers=BOB) as http:
        answers = [
            await http.get(_route(side.url, thread_id)),
            await http.get(_route(side.url, thread_id), params={"run_id": run_id}),
            await http.get(_route(side.url, thread_id), params={"wait": "5"}),
            await http.get(_route(auth_server.url, thread_id)),  # the JS route alike
        ]
    for response in answers:
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "thread_not_found"


async def test_the_js_route_never_answers_one_user_from_anothers_read(
    auth_server: js_server.JsServer, alice: LangGraphClient
) -> None:
    """The JS route's cache is the caller's: after the owner's reads (the second from
    the cache, then a 304), another user is told not found, even with the owner's
    ETag."""
    thread_id, _ = await _ask(alice, Q)
    route = _route(auth_server.url, thread_id)
    async with httpx.AsyncClient(headers=ALICE) as owner, httpx.AsyncClient(headers=BOB) as other:
        first = await owner.get(route)
        assert (await owner.get(route)).json() == first.json()
        etag = {"If-None-Match": first.headers["etag"]}
        assert (await owner.get(route, headers=etag)).status_code == 304
        for response in (await other.get(route), await other.get(route, headers=etag)):
            assert response.status_code == 404, response.text
            assert response.json()["error"]["code"] == "thread_not_found"


@pytest.mark.parametrize("headers", [{}, STRANGER], ids=["no credentials", "unknown token"])
async def test_credentials_the_server_refuses_are_a_401(
    side: Sidecar, alice: LangGraphClient, headers: dict[str, str]
) -> None:
    thread_id, _ = await _ask(alice, Q)
    async with httpx.AsyncClient(headers=headers) as http:
        for params in ({}, {"wait": "5"}):
            response = await http.get(_route(side.url, thread_id), params=params)
            assert response.status_code == 401, response.text
            error = response.json()["error"]
            assert (error["code"], error["retryable"]) == ("unauthorized", False)
            assert "credentials" in error["message"]


async def test_wait_answers_each_caller_as_that_caller(
    side: Sidecar, alice: LangGraphClient
) -> None:
    """The owner's long-poll returns at the run's end; another user's, on the same
    thread at the same time, is refused at once (no poll is shared across callers)."""
    thread_id, run_id = await _ask(alice, f"{Q} {SLOW}", wait=False)

    async def joined() -> float:
        await alice.runs.join(thread_id, run_id)
        return time.monotonic()

    async def waited(headers: dict[str, str]) -> tuple[float, httpx.Response]:
        async with httpx.AsyncClient(headers=headers, timeout=60) as http:
            response = await http.get(_route(side.url, thread_id), params={"wait": "30"})
        return time.monotonic(), response

    started = time.monotonic()
    join_at, (alice_at, owner), (bob_at, other) = await asyncio.gather(
        joined(), waited(ALICE), waited(BOB)
    )
    assert owner.status_code == 200 and owner.json()["status"] == "success", owner.text
    assert owner.json()["content"] == visible(answer_for(f"{Q} {SLOW}"))
    assert alice_at - join_at < WAIT_WITHIN_S
    assert other.status_code == 404 and bob_at - started < join_at - started


async def test_an_unchanged_answer_is_a_304(side: Sidecar, alice: LangGraphClient) -> None:
    thread_id, _ = await _ask(alice, Q)
    async with httpx.AsyncClient(headers=ALICE) as http:
        first = await http.get(_route(side.url, thread_id))
        again = await http.get(
            _route(side.url, thread_id), headers={"If-None-Match": first.headers["etag"]}
        )
    assert (again.status_code, again.headers["etag"]) == (304, first.headers["etag"])


def test_the_sidecar_needs_no_store(side: Sidecar) -> None:
    """It reads the server's API alone: no sessions.db was made or opened."""
    assert not (Path(side.log_path).parent / "data" / "sessions.db").exists()
