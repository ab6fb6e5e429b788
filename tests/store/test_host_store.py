"""Inside a real ``langgraph dev``, the route reads the store the server was configured
with, untold (``evoscientist_final_answer.store.host``): a host's own SQLite checkpointer
on a file no setting of ours names, stamping each graph's name as ``agent_name``, and a
server with no custom checkpointer at all (the stock in-memory store, with our complete
app as ``http.app``), where the in-process API answers."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph_sdk import get_client
from psycopg_pool import AsyncConnectionPool

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.host import StoreAddress, store_of
from tests.support.host_checkpointer import AGENT_PREFIX, HOST_DB_VARIABLE
from tests.support.postgres import temporary_schema
from tests.support.seeds import Seeder, open_seeder
from tests.support.servers import DevServer, langgraph_dev
from tests.support.slow_tool_graph import SLOW_ANSWER

pytestmark = pytest.mark.e2e

DEMO_GRAPH = "EvoScientist"
SLOW_GRAPH = "slow_tool"
COMPLETE_APP = "evoscientist_final_answer.http.app:app"
STAMPED_AGENTS_SQL = "SELECT DISTINCT json_extract(metadata, '$.agent_name') FROM checkpoints"


@pytest.fixture(scope="module")
def host_store_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("host-store")
    host_db = root / "elsewhere" / "host.db"
    host_db.parent.mkdir()
    with langgraph_dev(
        root / "work",
        root / "data",
        checkpointer_path="tests/support/host_checkpointer.py:checkpointer",
        extra_graphs={SLOW_GRAPH: "tests/support/slow_tool_graph.py:graph"},
        env={HOST_DB_VARIABLE: str(host_db), "EVOSCIENTIST_TEST_TOOL_SECONDS": "0.1"},
    ) as server:
        yield server


@pytest.fixture(scope="module")
def stock_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("stock")
    with langgraph_dev(root / "work", root / "data", checkpointer=False, app=COMPLETE_APP) as s:
        yield s


async def run_to_end(url: str, graph: str, question: str) -> dict[str, Any]:
    client = get_client(url=url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            thread_id, graph, input={"messages": [{"role": "user", "content": question}]}
        )
        await client.runs.join(thread_id, run["run_id"])
        return {"thread_id": thread_id, "run_id": run["run_id"]}
    finally:
        await client.aclose()


async def final_answer(url: str, thread_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        response = await http.get(f"/api/threads/{thread_id}/final-answer")
    assert response.status_code == 200, response.text
    return response.json()


def stamped_agents(db: Path) -> set[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT DISTINCT json_extract(metadata, '$.agent_name') FROM checkpoints"
        )
        return {row[0] for row in rows}


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        (DEMO_GRAPH, answer_for("Where is the store?", [notes_for("Where is the store?")])),
        (SLOW_GRAPH, SLOW_ANSWER),
    ],
)
async def test_every_graph_answers_from_the_hosts_own_store(
    host_store_server: DevServer, graph: str, expected: str
) -> None:
    run = await run_to_end(host_store_server.url, graph, "Where is the store?")
    body = await final_answer(host_store_server.url, run["thread_id"])
    assert body["source"] == "checkpointer"  # read from the host's file, not asked the API
    assert body["complete"] is True and body["status"] == "success"
    assert body["run_id"] == run["run_id"]
    assert body["content"] == expected
    # The file the route read is the host's, stamped with the graph's own agent name;
    # nothing was written where our settings point.
    host_db = Path(_host_db(host_store_server))
    assert f"{AGENT_PREFIX}{graph}" in stamped_agents(host_db)
    assert not host_store_server.sessions_db.exists()


def _host_db(server: DevServer) -> str:
    return str(server.workdir.parent / "elsewhere" / "host.db")


async def test_without_a_custom_checkpointer_the_api_answers(stock_server: DevServer) -> None:
    question = "What does a stock server keep?"
    run = await run_to_end(stock_server.url, DEMO_GRAPH, question)
    body = await final_answer(stock_server.url, run["thread_id"])
    assert body["source"] == "api"
    assert body["complete"] is True and body["status"] == "success"
    assert body["run_id"] == run["run_id"]
    assert body["content"] == answer_for(question, [notes_for(question)])
    assert not stock_server.sessions_db.exists()


# ---- what the route derives from a saver object (store_of), on the real savers


async def answer_through(address: StoreAddress | None, thread_id: str) -> dict[str, Any]:
    service = FinalAnswerService.of_store(address)
    try:
        return (await service.read(thread_id)).to_json()
    finally:
        await service.close()


@pytest.mark.backends("sqlite", "postgres")
async def test_the_writers_own_saver_names_the_store_it_writes(seeder: Seeder) -> None:
    """The seeder's saver is what a host's factory yields (``AsyncSqliteSaver`` on a
    file; ``AsyncPostgresSaver`` on one connection): the address derived from it reads
    the thread it wrote."""
    thread = await seeder.agent(("Which store?",))
    address = await store_of(seeder.saver)
    assert address is not None
    body = await answer_through(address, thread.thread_id)
    assert body["content"] == await thread.expected() and body["complete"] is True


async def test_a_pooled_postgres_saver_names_its_database(postgres_database: str) -> None:
    """``AsyncPostgresSaver`` over a pool (as the demo's factory makes it): its conninfo."""
    async with temporary_schema(postgres_database) as uri:
        async with open_seeder(uri) as seeder:
            thread = await seeder.agent(("Pooled?",))
            expected = await thread.expected()
        pool = AsyncConnectionPool(uri, kwargs={"autocommit": True}, open=False)
        await pool.open()
        try:
            address = await store_of(AsyncPostgresSaver(pool))
        finally:
            await pool.close()
        assert address == StoreAddress(postgres_conninfo=address.postgres_conninfo)
        body = await answer_through(address, thread.thread_id)
        assert body["content"] == expected


async def test_an_in_memory_sqlite_saver_names_no_store() -> None:
    async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
        assert await store_of(saver) is None
    assert await store_of(object()) is None  # a saver of another kind: the API answers
