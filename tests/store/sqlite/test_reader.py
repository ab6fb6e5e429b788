"""``SqliteAnswerReader``: the direct, read-only path to ``sessions.db``.

The route must never write to the store nor create it; a missing or unreadable store
is a retryable 503, not a 404 nor a traceback.

The tests marked ``backends("sqlite", "postgres")`` hold any direct reader to the same
expectations and run on ``PostgresAnswerReader`` too; the PostgreSQL-only ones (its
read-only sessions, an unreachable server, …) are in ``tests/store/postgres/test_reader.py``.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import HumanMessage

from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.store.errors import StoreUnavailable, ThreadNotFound
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import (
    AGENT_NAME,
    OTHER_AGENT,
    SeededThread,
    Seeder,
    Store,
    answer_client,
    checkpoint_id_of,
    expected_answer,
    open_seeder,
    route,
    uuid_thread_id,
)


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def store_files(path: Path) -> dict[str, str | None]:
    """The database and its WAL, by name, with a digest of their bytes."""
    return {name: digest(path.with_name(name)) for name in (path.name, f"{path.name}-wal")}


BOTH = pytest.mark.backends("sqlite", "postgres")


async def read(
    target: Store | Path, thread_id: str, run_id: str | None = None, agent: str = AGENT_NAME
):
    reader = Store.of(target).reader(agent)
    try:
        return await reader.read(thread_id, run_id)
    finally:
        await reader.close()


@BOTH
async def test_every_scenario_matches_aget_state(
    store: Store, scenario_threads: list[SeededThread]
) -> None:
    reader = store.reader()
    try:
        for thread in scenario_threads:
            snapshot = await thread.state()
            answer = await reader.read(thread.thread_id)
            assert answer.content == expected_answer(snapshot), thread.label
            assert answer.checkpoint_id == checkpoint_id_of(snapshot), thread.label
            assert answer.thread_id == thread.thread_id
            assert answer.source == "checkpointer"
            if snapshot.interrupts:
                assert answer.status is RunStatus.INTERRUPTED, thread.label
            elif any(task.error for task in snapshot.tasks):
                assert answer.status is RunStatus.ERROR, thread.label
            elif snapshot.next:
                assert answer.status is RunStatus.RUNNING, thread.label
            else:
                assert answer.status is RunStatus.SUCCESS, thread.label
    finally:
        await reader.close()


@BOTH
async def test_unknown_thread_raises_thread_not_found(seeder: Seeder) -> None:
    await seeder.chat(["hello"])
    with pytest.raises(ThreadNotFound):
        await read(seeder.store, uuid_thread_id())


@BOTH
async def test_agent_name_selects_rows(seeder: Seeder) -> None:
    thread = await seeder.chat(["ours", "theirs"], questions=["q1"])
    await seeder.run(thread, {"messages": [HumanMessage("q2")]}, agent_name=OTHER_AGENT)
    ours = await read(seeder.store, thread.thread_id)
    theirs = await read(seeder.store, thread.thread_id, agent=OTHER_AGENT)
    assert ours.content == expected_answer(thread.snapshots[thread.run_ids[0]]) == "ours"
    assert theirs.content == expected_answer(await thread.state()) == "theirs"


@BOTH
async def test_long_lived_connection_sees_new_checkpoints(seeder: Seeder) -> None:
    """One reader connection serves many requests: it must not keep reading an old
    snapshot of the file while the writer appends to the WAL."""
    thread = await seeder.chat([f"answer {i}" for i in range(4)], questions=["q0"])
    reader = seeder.store.reader()
    try:
        for turn in range(1, 4):
            before = await reader.read(thread.thread_id)
            assert before.content == expected_answer(await thread.state())
            await seeder.run(thread, {"messages": [HumanMessage(f"q{turn}")]})
            after = await reader.read(thread.thread_id)
            assert after.content == expected_answer(await thread.state()) == f"answer {turn}"
            assert after.checkpoint_id != before.checkpoint_id
    finally:
        await reader.close()


@BOTH
async def test_concurrent_requests_agree(client: httpx.AsyncClient, seeder: Seeder) -> None:
    threads = [await seeder.agent((f"topic {i}?",)) for i in range(3)]
    expected = {t.thread_id: expected_answer(await t.state()) for t in threads}
    responses = await asyncio.gather(
        *(client.get(route(t.thread_id)) for t in threads * 8),
    )
    for response in responses:
        body = response.json()
        assert response.status_code == 200
        assert body["content"] == expected[body["thread_id"]]


async def test_reader_connection_is_read_only(seeder: Seeder) -> None:
    """Even a bug in the reader could not write: its connection refuses to."""
    thread = await seeder.chat(["hello"])
    reader = SqliteAnswerReader(seeder.db_path, AGENT_NAME)
    try:
        await reader.read(thread.thread_id)
        assert reader._conn is not None
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            await reader._conn.execute("CREATE TABLE probe (x)")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            await reader._conn.execute("DELETE FROM checkpoints")
    finally:
        await reader.close()
    assert (await read(seeder.db_path, thread.thread_id)).content == "hello"


async def test_missing_store_is_503_and_never_created(tmp_path: Path) -> None:
    db_path = tmp_path / "nowhere" / "sessions.db"
    db_path.parent.mkdir()
    async with answer_client(db_path) as client:
        for params in ({}, {"format": "text"}, {"run_id": "r1"}, {"wait": "0.2"}):
            response = await client.get(route(uuid_thread_id()), params=params)
            assert response.status_code == 503, response.text
            body = response.json()
            assert body["error"] == {
                "code": "store_unavailable",
                "message": body["detail"],
                "retryable": True,
            }
            assert response.headers["cache-control"] == "no-store"
            assert response.headers["retry-after"]
            assert str(db_path) not in response.text  # no internals leaked
    assert list(db_path.parent.iterdir()) == []


async def test_missing_store_raises_store_unavailable(tmp_path: Path) -> None:
    db_path = tmp_path / "sessions.db"
    with pytest.raises(StoreUnavailable):
        await read(db_path, "a1b2c3d4")
    assert not db_path.exists()
    assert list(tmp_path.iterdir()) == []


async def test_store_appearing_later_is_read(tmp_path: Path) -> None:
    """A server started before the first session: 503 first, answers once it exists."""
    db_path = tmp_path / "sessions.db"
    async with answer_client(db_path) as client:
        thread_id = uuid_thread_id()
        assert (await client.get(route(thread_id))).status_code == 503
        async with open_seeder(db_path) as seeder:
            thread = await seeder.chat(["finally here"], thread_id=thread_id)
            expected = expected_answer(await thread.state())
            response = await client.get(route(thread_id))
            assert response.status_code == 200
            assert response.json()["content"] == expected == "finally here"


async def test_unreadable_file_is_503_and_left_alone(tmp_path: Path) -> None:
    db_path = tmp_path / "sessions.db"
    db_path.write_bytes(b"this is not a SQLite database\n" * 100)
    before = digest(db_path)
    async with answer_client(db_path) as client:
        response = await client.get(route("a1b2c3d4"))
    assert response.status_code == 503
    # Not a database at all: retrying will not heal it (issue 12).
    assert response.json()["error"]["code"] == "store_damaged"
    assert response.json()["error"]["retryable"] is False
    assert digest(db_path) == before


async def test_store_bytes_unchanged_after_many_requests(tmp_path: Path) -> None:
    db_path = tmp_path / "sessions.db"
    async with open_seeder(db_path) as seeder:
        threads = await seeder.every_scenario()
        expected = {t.thread_id: expected_answer(await t.state()) for t in threads}
        run_ids = {t.thread_id: t.run_ids for t in threads}
    # The writer is closed: its WAL is checkpointed into the file.
    before = store_files(db_path)
    assert before[db_path.name] is not None

    async with answer_client(db_path) as client:
        for _ in range(3):
            for thread_id, content in expected.items():
                body = (await client.get(route(thread_id))).json()
                assert body["content"] == content
                for run_id in run_ids[thread_id]:
                    response = await client.get(route(thread_id), params={"run_id": run_id})
                    assert response.status_code == 200
                text = await client.get(
                    route(thread_id), params={"format": "text", "include_reasoning": "1"}
                )
                assert text.text == content
                await client.get(route(thread_id), params={"wait": "0.05"})
            assert (await client.get(route(uuid_thread_id()))).status_code == 404
            assert (await client.get(route("x"), params={"wait": "x"})).status_code == 422

    after = store_files(db_path)
    assert after[db_path.name] == before[db_path.name]
    wal = db_path.with_name(f"{db_path.name}-wal")
    if before[wal.name] is not None:
        assert after[wal.name] == before[wal.name]
    else:  # SQLite may leave an empty WAL behind a read-only reader: nothing written
        assert not wal.exists() or wal.stat().st_size == 0


async def test_store_bytes_unchanged_while_the_writer_is_open(seeder: Seeder) -> None:
    """Reading beside a live writer (the usual case) leaves the file and its WAL alone."""
    threads = await seeder.every_scenario()
    before = store_files(seeder.db_path)
    assert before[f"{seeder.db_path.name}-wal"] is not None  # the data sits in the WAL
    async with answer_client(seeder.db_path) as client:
        for _ in range(5):
            for thread in threads:
                assert (await client.get(route(thread.thread_id))).status_code == 200
    assert store_files(seeder.db_path) == before


async def test_a_store_replaced_under_the_reader_is_read_afresh(tmp_path: Path) -> None:
    """A backup restored by renaming it over ``sessions.db``: the long-lived connection
    would go on reading the old, unlinked file; the reader opens the new one."""
    db_path = tmp_path / "data" / "sessions.db"
    backup = tmp_path / "backup" / "sessions.db"
    thread_id = uuid_thread_id()
    async with open_seeder(db_path) as seeder:
        await seeder.chat(["the answer before"], thread_id=thread_id)
    async with open_seeder(backup) as seeder:
        await seeder.chat(["the restored answer"], thread_id=thread_id)
    with closing(sqlite3.connect(backup)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # one self-contained file
    staged = db_path.with_name("restore.tmp")
    shutil.copyfile(backup, staged)
    async with answer_client(db_path) as client:
        before = await client.get(route(thread_id))
        assert before.json()["content"] == "the answer before"
        for leftover in db_path.parent.glob("sessions.db-*"):
            leftover.unlink()  # the old file's WAL is no part of the restored one
        staged.replace(db_path)
        after = await client.get(route(thread_id))
        assert after.status_code == 200
        assert after.json()["content"] == "the restored answer"
        db_path.unlink()
        gone = await client.get(route(thread_id))
        assert gone.status_code == 503
        assert gone.json()["error"]["code"] == "store_unavailable"
