"""A rolled-back run inside a real ``langgraph dev``, on both stores: ``?run_id=`` of it is
``404 run_not_found`` at once (even under ``wait=``), also on PostgreSQL, where a run
this server does not know might be another server's, and the thread reads as it was
before it. Every other reader of the store knows it too (``store.deleted_runs``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from tests.e2e.test_run_status import under_way
from tests.support.postgres import session_database
from tests.support.reliability import assert_error
from tests.support.seeds import Store, answer_client, route
from tests.support.servers import DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[DevServer, Store]]:
    """The server, and the store it writes."""
    root = tmp_path_factory.mktemp(f"rolled-back-{request.param}")
    env = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.05"}
    if request.param == "sqlite":
        with langgraph_dev(root / "work", root / "data", env=env) as server:
            yield server, Store("sqlite", str(server.sessions_db))
        return
    with (
        session_database() as uri,
        langgraph_dev(
            root / "work", root / "data", env={**env, "EVOSCIENTIST_DATABASE_URI": uri}
        ) as server,
    ):
        yield server, Store("postgres", uri)


def ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


async def test_a_rolled_back_run_id_is_404(served: tuple[DevServer, Store]) -> None:
    server, store = served
    client = get_client(url=server.url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        first_question = "Keep this turn?"
        first = await client.runs.create(thread_id, ASSISTANT, input=ask(first_question))
        await client.runs.join(thread_id, first["run_id"])
        second = await client.runs.create(thread_id, ASSISTANT, input=ask("Roll it back?"))
        await under_way(server, thread_id, messages=7)  # 4 of turn 1, 3 of turn 2
        await client.runs.cancel(thread_id, second["run_id"], wait=True, action="rollback")
    finally:
        await client.aclose()

    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        path = f"/api/threads/{thread_id}/final-answer"
        for params in ({"run_id": second["run_id"]}, {"run_id": second["run_id"], "wait": "5"}):
            started = time.monotonic()
            response = await http.get(path, params=params)
            assert_error(response, 404, "run_not_found", retryable=False)
            assert time.monotonic() - started < 4
        body = (await http.get(path)).json()
    assert (body["status"], body["run_id"]) == ("success", first["run_id"]), body
    assert body["content"] == answer_for(first_question, [notes_for(first_question)])

    # Another process reading the store (the standalone app; on ``sessions.db`` the
    # TUI's side of the file, on PostgreSQL any other server) knows it too: the server
    # marked the run deleted in the store, not only in its own memory.
    async with answer_client(store) as elsewhere:
        response = await elsewhere.get(route(thread_id), params={"run_id": second["run_id"]})
        assert_error(response, 404, "run_not_found", retryable=False)
        assert (await elsewhere.get(route(thread_id))).json() == body
