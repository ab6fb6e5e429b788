"""Our store maintenance inside upstream's own server: its checkpointer factory, with its
saver class taking ``SqliteMaintenance`` as docs/upstream-adoption.md offers
(``site/maintained_checkpointer.py``; everything else as in ``test_upstream_server``).
langgraph-api then finds ``aprune``, ``adelete_for_runs`` and ``acopy_thread``, and a
``multitask_strategy="rollback"`` run deletes the checkpoints of the run it cancels
(upstream's saver as shipped has no ``adelete_for_runs``: there the rollback run's
creation is answered with a 500)."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import closing

import httpx
import pytest
from langgraph_sdk import get_client

from tests.support.servers import DevServer, new_thread
from tests.upstream.env import require_upstream_env
from tests.upstream.implied import ASSISTANT, ask, assert_as_implied, route_and_state
from tests.upstream.server import SITE, upstream_server
from tests.upstream.site.scripted_model import answer_for

pytestmark = pytest.mark.e2e

CHECKPOINTER = f"{SITE / 'maintained_checkpointer.py'}:create_checkpointer_for_langgraph_api"
RUN_ROWS_SQL = (
    "SELECT count(*) FROM checkpoints WHERE json_extract(CAST(metadata AS TEXT), '$.run_id') = ?"
)
# Each checkpoint put takes this long in the server (site/maintained_checkpointer.py):
# a run stepping faster than that always has puts on their way when it is cancelled.
PUT_DELAY = 0.05
AGENT_NAMES_SQL = (
    "SELECT DISTINCT json_extract(CAST(metadata AS TEXT), '$.agent_name') FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ''"
)
# Writes whose checkpoint is gone: what a run's put after its rollback would leave.
ORPHAN_WRITES_SQL = (
    "SELECT count(*) FROM writes w WHERE w.thread_id = ? AND NOT EXISTS (SELECT 1 FROM "
    "checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns "
    "AND c.checkpoint_id = w.checkpoint_id)"
)
# langgraph-api's worker logs the end of a rolled-back run (its own run record is gone
# when the rollback request deleted it first).
ROLLED_BACK_LOG = ("Background run rolled back", "Ignoring rollback error for missing run")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = require_upstream_env()
    root = tmp_path_factory.mktemp("upstream-maintained")
    with upstream_server(
        env,
        root,
        checkpointer=CHECKPOINTER,
        SCRIPTED_SLOW_DELAY="0.1",
        SCRIPTED_PUT_DELAY=str(PUT_DELAY),
    ) as dev:
        yield dev


@pytest.fixture
async def http(server: DevServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=70) as client:
        yield client


def run_rows(server: DevServer, run_id: str) -> int:
    with closing(sqlite3.connect(f"file:{server.sessions_db}?mode=ro", uri=True)) as db:
        (count,) = db.execute(RUN_ROWS_SQL, (run_id,)).fetchone()
    return count


def orphan_writes(server: DevServer, thread_id: str) -> int:
    with closing(sqlite3.connect(f"file:{server.sessions_db}?mode=ro", uri=True)) as db:
        (count,) = db.execute(ORPHAN_WRITES_SQL, (thread_id,)).fetchone()
    return count


def stamped_agent_names(server: DevServer, thread_id: str) -> set[str | None]:
    with closing(sqlite3.connect(f"file:{server.sessions_db}?mode=ro", uri=True)) as db:
        return {name for (name,) in db.execute(AGENT_NAMES_SQL, (thread_id,))}


def stopped(server: DevServer, run_id: str) -> bool:
    """Whether langgraph-api's worker has ended the rolled-back run (its log says so)."""
    lines = [line for line in server.log().splitlines() if run_id in line]
    return any(marker in line for line in lines for marker in ROLLED_BACK_LOG)


def test_langgraph_api_finds_the_maintenance(server: DevServer) -> None:
    log = re.sub(r"\x1b\[[0-9;]*m", "", server.log())
    assert "Using custom checkpointer: MaintainedApiPruningCheckpointer" in log
    assert "Custom checkpointer missing" not in log


async def test_rollback_deletes_the_cancelled_runs_checkpoints(
    server: DevServer, http: httpx.AsyncClient
) -> None:
    """The first run is streamed, as the WebUI streams every run: langgraph-api then
    has its worker roll it back and delete its checkpoints once it has stopped."""
    thread_id = await new_thread(server.url)
    client = get_client(url=server.url, api_key=None)
    created: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def stream_first() -> None:
        async for _ in client.runs.stream(
            thread_id,
            ASSISTANT,
            input=ask("[slow] First, cut."),
            on_run_created=lambda meta: created.set_result(str(meta["run_id"])),
        ):
            pass

    streaming = asyncio.create_task(stream_first())
    try:
        first = await asyncio.wait_for(created, 30)
        for _ in range(600):  # until the first run has written
            if run_rows(server, first):
                break
            await asyncio.sleep(0.05)
        assert run_rows(server, first) > 0
        second = await client.runs.create(
            thread_id, ASSISTANT, input=ask("Second, kept."), multitask_strategy="rollback"
        )
        await client.runs.join(thread_id, second["run_id"])
    finally:
        streaming.cancel()
        await asyncio.gather(streaming, return_exceptions=True)
        await client.aclose()
    answer, state, thread = await route_and_state(http, thread_id, run_id=second["run_id"])
    assert_as_implied(answer, state, thread)
    assert answer["content"] == answer_for("Second, kept.")
    humans = [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]
    assert humans == ["Second, kept."]
    assert run_rows(server, first) == 0


async def test_rollback_of_a_running_run_nobody_streams(
    server: DevServer, http: httpx.AsyncClient
) -> None:
    """Nobody streams the first run: langgraph-api deletes its checkpoints in the
    rollback request itself, while the run, not yet cancelled, keeps stepping
    (``[steps]``) with its puts queued behind one another (``PUT_DELAY``); langgraph
    stores the queued ones when the run stops. The request succeeds, and from its
    answer on no checkpoint of the rolled-back run is stored again (one would be the
    thread's newest: its state and the route would show the rolled-back turn); the new
    run answers on the thread's earlier history alone, and no write is left behind."""
    thread_id = await new_thread(server.url)
    client = get_client(url=server.url, api_key=None)
    try:
        kept = await client.runs.create(thread_id, ASSISTANT, input=ask("Zeroth, kept."))
        await client.runs.join(thread_id, kept["run_id"])
        first = await client.runs.create(thread_id, ASSISTANT, input=ask("[steps] First, cut."))
        for _ in range(600):  # until the first run is well into its steps
            if run_rows(server, first["run_id"]) >= 5:
                break
            await asyncio.sleep(0.05)
        assert run_rows(server, first["run_id"]) >= 5
        second = await client.runs.create(
            thread_id, ASSISTANT, input=ask("Second, kept."), multitask_strategy="rollback"
        )
        rows_until_stopped = []
        for _ in range(1_500):
            rows_until_stopped.append(run_rows(server, first["run_id"]))
            if stopped(server, first["run_id"]):
                break
            await asyncio.sleep(0.02)
        assert stopped(server, first["run_id"])
        await client.runs.join(thread_id, second["run_id"])
    finally:
        await client.aclose()
    assert max(rows_until_stopped) == 0, rows_until_stopped
    answer, state, thread = await route_and_state(http, thread_id, run_id=second["run_id"])
    assert_as_implied(answer, state, thread)
    assert answer["content"] == answer_for("Second, kept.")
    humans = [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]
    assert humans == ["Zeroth, kept.", "Second, kept."]
    assert run_rows(server, first["run_id"]) == 0
    assert orphan_writes(server, thread_id) == 0
    # upstream's aput (its stamps) still runs under the mixin's for every other run.
    assert stamped_agent_names(server, thread_id) == {"EvoScientist"}
