"""No stolen wakes inside a real ``langgraph dev``, on ``sessions.db`` and
on PostgreSQL: long-polls of every kind parked on a run from its start; another tab
reads the route without waiting until it says complete, and a client joins the run
(``/runs/{id}/join``). That tab's reads see the new head and the thread's new status
before the polls' watches mostly do; every parked poll must still answer the final
answer at once, not stale ``running`` at its 30-s deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.server.fallback import FallbackApi
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from tests.support.postgres import session_database
from tests.support.seeds import Seeder, route, serving
from tests.support.servers import DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
TOKEN_DELAY = "0.01"
WAIT = 30
# From the join's return to the last parked answer: the polls wake with the read.
WOKEN_WITHIN = 5.0
READ_EVERY = 0.005
TURNS = 3


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp(f"wake-{request.param}")
    env = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": TOKEN_DELAY}
    database = session_database() if request.param == "postgres" else nullcontext()
    with database as uri:
        if uri is not None:
            env["EVOSCIENTIST_DATABASE_URI"] = uri
        with langgraph_dev(root / "work", root / "data", env=env) as dev:
            yield dev


def parked_requests(run_id: str) -> list[dict[str, Any]]:
    """Every kind that holds until the run ends (one with ``If-None-Match`` answers the
    run's next step: ``tests/http/longpoll/test_wake_order.py`` holds those on a gated run)."""
    return [
        {"params": {"wait": WAIT}},
        {"params": {"wait": WAIT, "format": "text"}},
        {"params": {"wait": WAIT, "include_reasoning": "true"}},
        {"params": {"wait": WAIT, "run_id": run_id}},
    ]


@pytest.mark.parametrize("then_read", ["plain GET", "GET by run_id"])
async def test_a_join_then_a_read_leaves_no_parked_poll_stale(
    server: DevServer, then_read: str
) -> None:
    """Turn after turn on one thread (the order the reads land in varies with the
    scheduler: before the fix, each turn left the polls stale three times in four)."""
    sdk = get_client(url=server.url, api_key=None, timeout=60)
    try:
        thread_id = (await sdk.threads.create())["thread_id"]
        for turn in range(TURNS):
            await one_turn(
                sdk, server.url, thread_id, f"Turn {turn} after a {then_read}?", then_read
            )
    finally:
        await sdk.aclose()


async def one_turn(sdk: Any, url: str, thread_id: str, question: str, then_read: str) -> None:
    final = answer_for(question, [notes_for(question)])
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    async with (
        httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as polls,
        httpx.AsyncClient(base_url=url, timeout=60) as other,
    ):
        path = f"/api/threads/{thread_id}/final-answer"
        run = await sdk.runs.create(
            thread_id, ASSISTANT, input={"messages": [{"role": "user", "content": question}]}
        )
        parked = parked_requests(run["run_id"]) * 2
        tasks = [asyncio.create_task(polls.get(path, **request)) for request in parked]
        await asyncio.sleep(0.5)
        params = {"run_id": run["run_id"]} if then_read == "GET by run_id" else {}

        async def read_until_complete() -> dict[str, Any]:
            # A second tab reading without waiting: it sees each new head, the run's end
            # included, as soon as it is written, mostly before the polls' watches do.
            while True:
                body = (await other.get(path, params=params)).json()
                if body["complete"] and body["run_id"] == run["run_id"]:
                    return body
                await asyncio.sleep(READ_EVERY)

        reading = asyncio.create_task(read_until_complete())
        await sdk.runs.join(thread_id, run["run_id"])
        joined = time.monotonic()
        read = await reading
        assert read["content"] == final, read

        done, pending = await asyncio.wait(tasks, timeout=WOKEN_WITHIN)
        for task in pending:
            task.cancel()
        assert not pending, f"{len(pending)} of {len(tasks)} parked polls still held"
        for task in done:
            response = task.result()
            assert response.status_code == 200, response.text
            if response.headers["content-type"].startswith("text/plain"):
                assert response.text == final
            else:
                body = response.json()
                assert body["complete"] is True and body["content"] == final, body
        assert time.monotonic() - joined < WOKEN_WITHIN


@pytest.fixture(scope="module")
def api_only_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """A ``langgraph dev`` keeping its checkpoints in its own in-memory store."""
    root = tmp_path_factory.mktemp("wake-api-only")
    env = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": TOKEN_DELAY}
    with langgraph_dev(root / "work", root / "data", checkpointer=False, env=env) as dev:
        yield dev


async def test_a_poll_answered_through_the_fallback_api_wakes_at_the_run_end(
    api_only_server: DevServer, seeder: Seeder
) -> None:
    """The standalone app with ``EVOSCIENTIST_LANGGRAPH_URL``: its own store is readable
    (it holds other threads) but never holds this one, which the API's server keeps
    elsewhere. Nothing here watches that store: the poll asks the API again and again.
    (It slept to its deadline: the store's watch, readable, was trusted to see it.)"""
    await seeder.paused_before()  # the app's own store: readable, with another thread
    api = ApiAnswerReader(api_only_server.url)
    service = FinalAnswerService(seeder.store.reader(), api, server=FallbackApi(api))
    sdk = get_client(url=api_only_server.url, api_key=None, timeout=60)
    question = "Who watches a store no one here can see?"
    try:
        async with serving(create_app(lambda: service)) as client:
            thread_id = (await sdk.threads.create())["thread_id"]
            run = await sdk.runs.create(
                thread_id, ASSISTANT, input={"messages": [{"role": "user", "content": question}]}
            )
            poll = asyncio.create_task(client.get(route(thread_id), params={"wait": WAIT}))
            await sdk.runs.join(thread_id, run["run_id"])
            joined = time.monotonic()
            body = (await asyncio.wait_for(poll, WOKEN_WITHIN)).json()
            assert time.monotonic() - joined < WOKEN_WITHIN
    finally:
        await sdk.aclose()
        await service.close()
    assert body["source"] == "api" and body["complete"] is True, body
    assert body["content"] == answer_for(question, [notes_for(question)])
