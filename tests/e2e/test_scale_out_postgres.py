"""Scale-out end to end: two real ``langgraph dev`` servers share one PostgreSQL database,
as API servers behind a load balancer would. A run on server A, its stream cut for good,
is answered completely by B's route from A's checkpoint rows (B's own API never heard of
the thread); a run A rolls back is ``404 run_not_found`` on B and on later servers too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.recovery import stream_with_recovery
from tests.e2e.test_run_status import under_way
from tests.support.postgres import session_database, table_names
from tests.support.proxy import Fault, FaultProxy
from tests.support.reliability import assert_error
from tests.support.servers import DevServer, langgraph_dev, new_thread

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
TOKEN_DELAY = "0.01"


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """A PostgreSQL database of this module's own, dropped afterwards."""
    with session_database() as uri:
        yield uri


def server_env(database: str) -> dict[str, str]:
    return {"EVOSCIENTIST_DATABASE_URI": database, "EVOSCIENTIST_OFFLINE_TOKEN_DELAY": TOKEN_DELAY}


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory, database: str
) -> Iterator[tuple[DevServer, DevServer]]:
    root = tmp_path_factory.mktemp("scale-out")
    env = server_env(database)
    with (
        langgraph_dev(root / "a" / "work", root / "a" / "data", env=env) as a,
        langgraph_dev(root / "b" / "work", root / "b" / "data", env=env) as b,
    ):
        yield a, b


def expected_answer(question: str) -> str:
    return answer_for(question, [notes_for(question)])


def ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


async def final_answer(url: str, thread_id: str, **params: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=70) as http:
        return await http.get(f"/api/threads/{thread_id}/final-answer", params=params)


async def assert_unknown_to(url: str, thread_id: str) -> None:
    client = get_client(url=url, api_key=None)
    try:
        with pytest.raises(NotFoundError):
            await client.threads.get(thread_id)
    finally:
        await client.aclose()


async def test_cut_run_on_a_is_answered_by_b(
    servers: tuple[DevServer, DevServer], database: str
) -> None:
    a, b = servers
    question = "Scale-out: which server knows the answer?"
    # Every reconnect is cut too: the SDK's own resume cannot help.
    fault = Fault(kind="cut", after_bytes=3_000, times=None, then_after_bytes=0)
    async with FaultProxy(a.port, fault) as proxy:
        thread_id = await new_thread(a.url)
        result = await stream_with_recovery(
            proxy.url, thread_id, ASSISTANT, ask(question), stall_timeout=3.0, max_wait=60
        )
        assert proxy.stats.fired >= 1, "the fault never fired"
    assert result["truncated"] is True
    assert result["complete"] is True and result["status"] == "success"

    await assert_unknown_to(b.url, thread_id)  # B's API has never seen it
    response = await final_answer(b.url, thread_id)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["source"] == "checkpointer"
    assert body["complete"] is True and body["status"] == "success"
    assert body["run_id"] == result["run_id"]
    assert body["content"] == result["content"] == expected_answer(question)
    by_run = await final_answer(b.url, thread_id, run_id=result["run_id"], format="text")
    assert by_run.status_code == 200
    assert by_run.text == expected_answer(question)
    assert by_run.headers["x-answer-source"] == "checkpointer"

    # Both servers wrote to the shared database, and only there.
    assert "checkpoints" in await table_names(database)
    assert not a.sessions_db.exists() and not b.sessions_db.exists()


async def test_b_long_polls_a_run_executing_on_a(servers: tuple[DevServer, DevServer]) -> None:
    """B holds the request while A's run executes, and answers once it completes.

    Before the run's first checkpoint B knows nothing of the thread (a 404: neither its
    API nor the database has it); from then on B answers, ``running`` until the end."""
    a, b = servers
    question = "Scale-out: wait for it"
    client = get_client(url=a.url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        run = await client.runs.create(thread_id, ASSISTANT, input=ask(question))
        deadline = time.monotonic() + 30
        while (
            first := await final_answer(b.url, thread_id, run_id=run["run_id"])
        ).status_code == 404:
            assert time.monotonic() < deadline, "B never saw the run's first checkpoint"
            await asyncio.sleep(0.02)
        assert first.status_code == 200, first.text
        # Caught while A still runs it. B's API has never heard of the run, yet on a
        # shared database that does not make it lost: it is alive on A.
        assert first.json()["complete"] is False and first.json()["error"] is None

        response = await final_answer(b.url, thread_id, run_id=run["run_id"], wait=60)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["complete"] is True and body["status"] == "success", body
        assert body["content"] == expected_answer(question)
        assert body["source"] == "checkpointer"
        await client.runs.join(thread_id, run["run_id"])
    finally:
        await client.aclose()
    # A, which ran it, gives the same answer.
    assert (await final_answer(a.url, thread_id)).json()["content"] == body["content"]


async def test_unknown_thread_is_404_on_both(servers: tuple[DevServer, DevServer]) -> None:
    for server in servers:
        response = await final_answer(server.url, "00000000-0000-4000-8000-000000000000")
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "thread_not_found"


async def test_a_run_rolled_back_on_a_is_404_on_every_server(
    servers: tuple[DevServer, DevServer], database: str, tmp_path: Path
) -> None:
    """A rolls a run back: ``?run_id=`` of it is ``404 run_not_found`` on A, on B (whose
    API never heard of the run), and on C, started afterwards. The deletion is marked
    in the shared database, not in A's memory; each thread reads its earlier turn."""
    a, b = servers
    first_question = "Scale-out: keep this turn"
    client = get_client(url=a.url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        first = await client.runs.create(thread_id, ASSISTANT, input=ask(first_question))
        await client.runs.join(thread_id, first["run_id"])
        second = await client.runs.create(
            thread_id, ASSISTANT, input=ask("Scale-out: roll this turn back")
        )
        await under_way(a, thread_id, messages=7)  # 4 of turn 1, 3 of turn 2
        await client.runs.cancel(thread_id, second["run_id"], wait=True, action="rollback")
    finally:
        await client.aclose()

    async def assert_rolled_back(server: DevServer) -> None:
        for params in ({"run_id": second["run_id"]}, {"run_id": second["run_id"], "wait": "5"}):
            started = time.monotonic()
            response = await final_answer(server.url, thread_id, **params)
            assert_error(response, 404, "run_not_found", retryable=False)
            assert time.monotonic() - started < 4
        body = (await final_answer(server.url, thread_id)).json()
        assert (body["status"], body["run_id"]) == ("success", first["run_id"]), body
        assert body["content"] == expected_answer(first_question)

    await assert_rolled_back(a)
    await assert_unknown_to(b.url, thread_id)  # B's API has never seen the thread
    await assert_rolled_back(b)
    with langgraph_dev(
        tmp_path / "c" / "work", tmp_path / "c" / "data", env=server_env(database)
    ) as c:
        await assert_rolled_back(c)
