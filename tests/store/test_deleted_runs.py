"""``store.deleted_runs``: the runs a saver deleted are remembered, and only those; in
the store itself, so that every reader of it (another server sharing the PostgreSQL
database, another process reading ``sessions.db``, one started afterwards) answers a
deleted ``run_id`` with ``404 run_not_found``, and a store nothing was deleted from
reads as before."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage

from evoscientist_final_answer.answer.run_liveness import RunNotFound
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.maintenance.sqlite import MaintainedSqliteSaver
from evoscientist_final_answer.store.deleted_runs import (
    TABLE,
    deleted_here,
    recording_deletions,
)
from evoscientist_final_answer.store.sqlite.change_signal import COALESCE_SECONDS, TRAILING_SECONDS
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.factory_saver import factory_saver as open_factory_saver
from tests.support.reliability import assert_error
from tests.support.seeds import (
    AGENT_NAME,
    SeededThread,
    Seeder,
    Store,
    answer,
    answer_client,
    new_run_id,
    node_graph,
    route,
    scripted_graph,
    uuid_thread_id,
)


async def test_a_deleted_run_is_remembered(tmp_path: Path) -> None:
    async with MaintainedSqliteSaver.from_conn_string(str(tmp_path / "sessions.db")) as saver:
        saver = recording_deletions(saver)
        assert type(saver) is MaintainedSqliteSaver  # the class the server logs
        graph = node_graph(saver, [("agent", answer("hi"))])
        thread_id, kept, deleted = uuid_thread_id(), new_run_id(), new_run_id()
        for run_id in (kept, deleted):
            config = {"configurable": {"thread_id": thread_id}, "metadata": {"run_id": run_id}}
            await graph.ainvoke({"messages": [HumanMessage("q")]}, config)
        await saver.adelete_for_runs([deleted])
        assert deleted_here(deleted)
        assert not deleted_here(kept)
        remaining = [c async for c in saver.alist({"configurable": {"thread_id": thread_id}})]
        assert remaining and all(c.metadata["run_id"] == kept for c in remaining)


# A change reported and settled: the signal then vouches for quiet.
SETTLE_SECONDS = COALESCE_SECONDS + TRAILING_SECONDS + 0.1


# ------------------------------------------------------------------ marked in the store


@pytest.fixture
async def factory_saver(store: Store, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    """The saver ``langgraph.json``'s factory yields for ``store``: what deletes a run
    inside langgraph-api (a rollback)."""
    async with open_factory_saver(store, monkeypatch) as saver:
        yield saver


async def with_a_paused_run(seeder: Seeder) -> tuple[SeededThread, str, str]:
    """A finished turn, then a run stopped before its model (it looks under way to a
    reader outside the server): the thread, the finished run, the paused run."""
    thread = await seeder.chat(["the kept answer"])
    paused = scripted_graph(seeder.saver, ["never written"], interrupt_before=["agent"])
    run_id = await seeder.run(thread, {"messages": [HumanMessage("roll me back")]}, graph=paused)
    return thread, thread.run_ids[0], run_id


async def has_deleted_runs_table(store: Store) -> bool:
    if store.backend == "sqlite":
        with closing(sqlite3.connect(store.path)) as conn:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
            ).fetchone()
        return found is not None
    async with await psycopg.AsyncConnection.connect(store.uri) as conn:
        cur = await conn.execute("SELECT to_regclass(%s) IS NOT NULL", (TABLE,))
        row = await cur.fetchone()
    return bool(row and row[0])


@pytest.mark.backends("sqlite", "postgres")
async def test_a_deleted_run_is_not_found_by_every_reader_of_the_store(
    store: Store, seeder: Seeder, factory_saver: Any
) -> None:
    """Readers of the store other than the deleting server's (another server on the
    PostgreSQL database, another process on ``sessions.db``), one that read the run
    before and one started after: ``404 run_not_found``, at once, even under ``wait=``."""
    thread, kept, doomed = await with_a_paused_run(seeder)
    async with answer_client(store) as before:
        under_way = await before.get(route(thread.thread_id), params={"run_id": doomed})
        assert under_way.status_code == 200 and under_way.json()["run_id"] == doomed

        await factory_saver.adelete_for_runs([doomed])

        async with answer_client(store) as after:
            for client in (before, after):
                for params in ({"run_id": doomed}, {"run_id": doomed, "wait": "10"}):
                    started = time.monotonic()
                    response = await client.get(route(thread.thread_id), params=params)
                    assert_error(response, 404, "run_not_found", retryable=False)
                    assert time.monotonic() - started < 5
                latest = (await client.get(route(thread.thread_id))).json()
                assert (latest["run_id"], latest["content"]) == (kept, "the kept answer")
                by_kept = await client.get(route(thread.thread_id), params={"run_id": kept})
                assert by_kept.json()["content"] == "the kept answer"


@pytest.mark.backends("sqlite", "postgres")
async def test_a_long_poll_on_a_run_ends_when_it_is_deleted(
    store: Store, seeder: Seeder, factory_saver: Any
) -> None:
    thread, _, doomed = await with_a_paused_run(seeder)
    async with answer_client(store) as client:
        held = asyncio.create_task(
            client.get(route(thread.thread_id), params={"run_id": doomed, "wait": "30"})
        )
        await asyncio.sleep(0.5)
        assert not held.done(), held.result().text
        started = time.monotonic()
        await factory_saver.adelete_for_runs([doomed])
        response = await asyncio.wait_for(held, 10)
        assert_error(response, 404, "run_not_found", retryable=False)
        assert time.monotonic() - started < 5


@pytest.mark.backends("sqlite", "postgres")
async def test_a_store_nothing_was_deleted_from_has_no_deleted_runs(
    store: Store, seeder: Seeder
) -> None:
    """No table of deleted runs (an older writer, nothing rolled back yet): a run no
    checkpoint carries is ``pending``, and reading creates nothing."""
    thread = await seeder.chat(["an answer"])
    unknown = new_run_id()
    async with answer_client(store) as client:
        response = await client.get(route(thread.thread_id), params={"run_id": unknown})
        assert response.status_code == 200, response.text
        assert (response.json()["status"], response.json()["run_id"]) == ("pending", unknown)
        missing = await client.get(route(uuid_thread_id()), params={"run_id": unknown})
        assert_error(missing, 404, "thread_not_found", retryable=False)
    assert not await has_deleted_runs_table(store)


@pytest.mark.backends("sqlite", "postgres")
async def test_a_deletion_marks_its_runs_in_the_store(
    store: Store, seeder: Seeder, factory_saver: Any
) -> None:
    """Also a run that never wrote a checkpoint (rolled back before its first step),
    and a deletion repeated (langgraph-api deletes a run again once its worker stops)."""
    thread, _, doomed = await with_a_paused_run(seeder)
    never_written = new_run_id()
    for _ in range(2):
        await factory_saver.adelete_for_runs([doomed, never_written])
    assert await has_deleted_runs_table(store)
    async with answer_client(store) as client:
        for run_id in (doomed, never_written):
            response = await client.get(route(thread.thread_id), params={"run_id": run_id})
            assert_error(response, 404, "run_not_found", retryable=False)


async def test_a_repeat_poll_of_a_run_not_written_yet_reads_nothing_until_a_write(
    store: Store, seeder: Seeder, factory_saver: Any
) -> None:
    """On ``sessions.db`` the lookup of a mark is skipped while the change signal
    vouches that nothing was written since it was found missing: a client polling a run
    that has not written yet costs no trip to the file (as before there were marks),
    and the deletion, a write, is seen by the next poll."""
    thread, _, doomed = await with_a_paused_run(seeder)
    unknown = new_run_id()
    # A store with marks (SQLite traces no statement that fails to prepare, as the
    # lookup in a store without the table does).
    await factory_saver.adelete_for_runs([new_run_id()])
    reader = SqliteAnswerReader(store.path, AGENT_NAME)
    statements: list[str] = []
    try:
        for run_id in (doomed, unknown):
            await reader.read(thread.thread_id, run_id)
        await asyncio.sleep(SETTLE_SECONDS)
        assert (await reader.read(thread.thread_id, unknown)).status is RunStatus.PENDING
        assert reader._conn is not None
        await reader._conn.set_trace_callback(statements.append)
        for _ in range(5):
            assert (await reader.read(thread.thread_id, unknown)).status is RunStatus.PENDING
        assert statements == []

        await factory_saver.adelete_for_runs([doomed, unknown])
        for run_id in (doomed, unknown):
            with pytest.raises(RunNotFound):
                await reader.read(thread.thread_id, run_id)
    finally:
        await reader.close()
