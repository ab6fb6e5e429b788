"""One error taxonomy on every backend: a checkpoint the store holds but this process cannot
decode is ``503 checkpoint_unreadable`` (not retryable), a store that cannot be read is
``503 store_unavailable`` (retryable). Stored values of real threads are overwritten as a
bad disk or another serializer would leave them (SQLite-only faults:
``tests/store/sqlite/test_reliability_bad_data.py``).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import closing
from typing import Any

import httpx
import ormsgpack
import psycopg
import pytest

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.base import Head
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.reliability import assert_error, assert_one_line_naming, chain
from tests.support.seeds import (
    AGENT_NAME,
    DELTA_PREAMBLE,
    SeededThread,
    Seeder,
    Store,
    answer_client,
    expected_answer,
    route,
)

pytestmark = pytest.mark.backends("sqlite", "postgres")

# Bytes no msgpack decoder accepts (0xc1 is the one byte msgpack never uses).
GARBAGE = b"\xc1 not a serialized value \xc1"

Damage = Callable[[Store, SeededThread], Awaitable[None]]


@pytest.fixture(autouse=True)
def _decoder_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)


# ------------------------------------------------------------------ damaging a store


def sqlite_update(store: Store, sql: str, params: tuple[Any, ...]) -> None:
    with closing(sqlite3.connect(store.path, timeout=10)) as conn:
        cur = conn.execute(sql, params)
        assert cur.rowcount == 1, sql
        conn.commit()


async def postgres_update(store: Store, sql: str, params: tuple[Any, ...]) -> None:
    async with await psycopg.AsyncConnection.connect(store.uri, autocommit=True) as conn:
        cur = await conn.execute(sql, params)
        assert cur.rowcount == 1, sql


# The thread's newest root checkpoint, in each backend's SQL.
SQLITE_HEAD = (
    "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '')"
)
POSTGRES_HEAD = (
    "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '')"
)


async def garbage_values(store: Store, thread: SeededThread) -> None:
    """The bytes the head's channel values are stored as: SQLite keeps them in the
    checkpoint's own blob, PostgreSQL the messages in ``checkpoint_blobs``."""
    if store.backend == "sqlite":
        sqlite_update(
            store,
            "UPDATE checkpoints SET checkpoint = ? "
            f"WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = {SQLITE_HEAD}",
            (GARBAGE, thread.thread_id, thread.thread_id),
        )
        return
    await postgres_update(
        store,
        "UPDATE checkpoint_blobs b SET blob = %s FROM checkpoints c "
        "WHERE c.thread_id = %s AND c.checkpoint_ns = '' "
        f"AND c.checkpoint_id = {POSTGRES_HEAD} "
        "AND b.thread_id = c.thread_id AND b.checkpoint_ns = '' AND b.channel = 'messages' "
        "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'",
        (GARBAGE, thread.thread_id, thread.thread_id),
    )


async def garbage_error_write(store: Store, thread: SeededThread) -> None:
    """The failed task's ``__error__`` write, which decides the run's status."""
    if store.backend == "sqlite":
        sql = "UPDATE writes SET value = ? WHERE thread_id = ? AND channel = '__error__'"
        sqlite_update(store, sql, (GARBAGE, thread.thread_id))
        return
    sql = "UPDATE checkpoint_writes SET blob = %s WHERE thread_id = %s AND channel = '__error__'"
    await postgres_update(store, sql, (GARBAGE, thread.thread_id))


async def checkpoint_of_another_shape(store: Store, thread: SeededThread) -> None:
    """A checkpoint that parses, but is not one: its channel versions a string. (On
    PostgreSQL the readers' own SQL meets it first: ``jsonb_each_text`` refuses it.)"""
    if store.backend == "sqlite":
        blob = ormsgpack.packb({"v": 4, "id": "x", "channel_values": "garbage"})
        sqlite_update(
            store,
            "UPDATE checkpoints SET checkpoint = ? "
            f"WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = {SQLITE_HEAD}",
            (blob, thread.thread_id, thread.thread_id),
        )
        return
    await postgres_update(
        store,
        "UPDATE checkpoints SET checkpoint = "
        "jsonb_set(checkpoint, '{channel_versions}', '\"garbage\"') "
        f"WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = {POSTGRES_HEAD}",
        (thread.thread_id, thread.thread_id),
    )


async def answered_thread(seeder: Seeder) -> SeededThread:
    return await seeder.chat(["first answer", "the answer to damage"])


async def failed_thread(seeder: Seeder) -> SeededThread:
    return await seeder.failed("kaboom")


DAMAGES = [
    pytest.param(answered_thread, garbage_values, id="values-blob"),
    pytest.param(failed_thread, garbage_error_write, id="error-write"),
    pytest.param(answered_thread, checkpoint_of_another_shape, id="checkpoint-shape"),
]


# ------------------------------------------------------------------ undecodable


@pytest.mark.parametrize(("victim_of", "damage"), DAMAGES)
@pytest.mark.parametrize("lazy_decoding", [True, False], ids=["lazy", "full"])
async def test_an_undecodable_checkpoint_is_unreadable_on_every_backend(
    store: Store,
    seeder: Seeder,
    victim_of: Callable[[Seeder], Awaitable[SeededThread]],
    damage: Damage,
    lazy_decoding: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    victim = await victim_of(seeder)
    bystander = await seeder.chat(["the bystander's answer"])
    await damage(store, victim)
    async with answer_client(store, lazy_decoding=lazy_decoding) as client:
        for params in ({}, {"run_id": victim.run_ids[-1]}):
            caplog.clear()
            response = await client.get(route(victim.thread_id), params=params)
            body = assert_error(response, 503, "checkpoint_unreadable", retryable=False)
            assert body["detail"] == body["error"]["message"]
            assert "retry-after" not in response.headers
            assert_one_line_naming(caplog, victim.thread_id, "unreadable")
        # Asking again gives the same answer; the store still serves every other thread.
        again = await client.get(route(victim.thread_id))
        assert_error(again, 503, "checkpoint_unreadable", retryable=False)
        healthy = await client.get(route(bystander.thread_id))
        assert healthy.status_code == 200, healthy.text
        assert healthy.json()["content"] == expected_answer(await bystander.state())


# ------------------------------------------------------------------ pruned history


async def delta_thread(seeder: Seeder) -> SeededThread:
    """DeltaChannel turns whose checkpoints mostly store no value of the channel: their
    messages are rebuilt from the nearest snapshot up the chain and the writes since."""
    return await seeder.chat(
        ["answer 1", "answer 2", "answer 3"], mode="delta", preamble=DELTA_PREAMBLE
    )


async def ancestry(store: Store, thread_id: str) -> list[tuple[str, bool]]:
    """The head's root-namespace ancestry, newest first: ``(checkpoint_id, stores the
    messages' value)``."""
    if store.backend == "sqlite":
        return chain(store.path, thread_id)
    async with await psycopg.AsyncConnection.connect(store.uri) as conn:
        cur = await conn.execute(
            "SELECT c.checkpoint_id, c.parent_checkpoint_id, EXISTS (SELECT 1 FROM "
            "checkpoint_blobs b WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = '' "
            "AND b.channel = 'messages' AND b.type <> 'empty' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages') "
            "FROM checkpoints c WHERE c.thread_id = %s AND c.checkpoint_ns = ''",
            (thread_id,),
        )
        rows = {cid: (parent, stored) for cid, parent, stored in await cur.fetchall()}
    found: list[tuple[str, bool]] = []
    current: str | None = max(rows)
    while current is not None and current in rows:
        parent, stored = rows[current]
        found.append((current, stored))
        current = parent
    return found


async def delete_checkpoints(store: Store, thread_id: str, ids: list[str]) -> None:
    """Delete the checkpoints and the writes against them, as a pruning job would."""
    if store.backend == "sqlite":
        with closing(sqlite3.connect(store.path, timeout=10)) as conn:
            for table in ("writes", "checkpoints"):
                conn.execute(
                    f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = '' "
                    "AND checkpoint_id IN (SELECT value FROM json_each(?))",
                    (thread_id, json.dumps(ids)),
                )
            conn.commit()
        return
    async with await psycopg.AsyncConnection.connect(store.uri, autocommit=True) as conn:
        for table in ("checkpoint_writes", "checkpoints"):
            await conn.execute(
                f"DELETE FROM {table} WHERE thread_id = %s AND checkpoint_ns = '' "
                "AND checkpoint_id = ANY(%s)",
                (thread_id, ids),
            )


@pytest.mark.parametrize("gone", ["parent", "snapshot"])
@pytest.mark.parametrize("lazy_decoding", [True, False], ids=["lazy", "full"])
async def test_a_history_pruned_before_any_snapshot_is_unreadable_on_every_backend(
    store: Store,
    seeder: Seeder,
    gone: str,
    lazy_decoding: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A checkpoint's messages cannot be rebuilt once one between it and the snapshot
    they start from is gone (``parent``: the walk finds no row at its very first step;
    ``snapshot``: it ends one step further up). langgraph's own walk stops silently at
    the gap, and an answer from part of the history may be another turn's: on
    PostgreSQL the full decode answered an empty ``success``, the lazy one a retryable
    ``store_unavailable``."""
    thread = await delta_thread(seeder)
    rows = await ancestry(store, thread.thread_id)
    # The newest checkpoint that is two steps below a snapshot, with nothing stored in
    # between, becomes the head (the ones above it deleted, as a rollback would).
    stored = [has_value for _, has_value in rows]
    head = next(i for i in range(len(rows) - 2) if stored[i : i + 3] == [False, False, True])
    doomed = [checkpoint_id for checkpoint_id, _ in rows[:head]]
    doomed.append(rows[head + 1 if gone == "parent" else head + 2][0])
    await delete_checkpoints(store, thread.thread_id, doomed)
    async with answer_client(store, lazy_decoding=lazy_decoding) as client:
        caplog.clear()
        response = await client.get(route(thread.thread_id))
        assert_error(response, 503, "checkpoint_unreadable", retryable=False)
        assert_one_line_naming(caplog, thread.thread_id, "pruned")


@pytest.mark.parametrize("lazy_decoding", [True, False], ids=["lazy", "full"])
async def test_a_history_pruned_below_its_snapshot_still_answers_on_every_backend(
    store: Store, seeder: Seeder, lazy_decoding: bool
) -> None:
    thread = await delta_thread(seeder)
    expected = expected_answer(await thread.state())
    rows = await ancestry(store, thread.thread_id)
    nearest = next(i for i, (_, has_value) in enumerate(rows) if has_value and i > 0)
    below = [checkpoint_id for checkpoint_id, _ in rows[nearest + 1 :]]
    assert below, "the snapshot has ancestors to prune"
    await delete_checkpoints(store, thread.thread_id, below)
    async with answer_client(store, lazy_decoding=lazy_decoding) as client:
        response = await client.get(route(thread.thread_id))
    assert response.status_code == 200, response.text
    assert response.json()["content"] == expected == "answer 3"


# ------------------------------------------------------------------ connection lost


class LosesItsConnection:
    """A real reader whose store connection is cut once, after the head was read and
    before its checkpoint is decoded: the decode meets a dead connection."""

    cut = False

    async def lose_connection(self) -> None:
        raise NotImplementedError

    async def answer(self, thread_id: str, head: Head) -> FinalAnswer:
        if not self.cut:
            self.cut = True
            await self.lose_connection()
        return await super().answer(thread_id, head)  # type: ignore[misc]


class SqliteLosingConnection(LosesItsConnection, SqliteAnswerReader):
    async def lose_connection(self) -> None:
        # What a reset elsewhere does: the shared aiosqlite connection closed under reads.
        assert self._conn is not None
        await self._conn.close()


class PostgresLosingConnection(LosesItsConnection, PostgresAnswerReader):
    async def lose_connection(self) -> None:
        # The server ends the pool's one connection (a restart, a failover, an admin).
        async with self._db.session() as conn:
            pid = conn.info.backend_pid
        async with await psycopg.AsyncConnection.connect(self.uri, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


@pytest.mark.parametrize("lazy_decoding", [True, False], ids=["lazy", "full"])
async def test_a_connection_lost_while_decoding_is_unavailable_on_every_backend(
    store: Store, seeder: Seeder, lazy_decoding: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A DeltaChannel thread between snapshots: even the lazy decode, handed the head's
    # row by the head query, must read the history below it.
    thread = await seeder.chat(["the answer"], mode="delta", preamble=DELTA_PREAMBLE)
    reader: SqliteAnswerReader | PostgresAnswerReader
    if store.backend == "sqlite":
        reader = SqliteLosingConnection(store.path, AGENT_NAME, lazy_decoding=lazy_decoding)
    else:
        from evoscientist_final_answer.store.postgres import connection as postgres_connection

        # No ping on checkout: the dead connection is the one the decode gets.
        monkeypatch.setattr(postgres_connection, "RECENTLY_USED_SECONDS", 3600.0)
        reader = PostgresLosingConnection(
            store.uri, AGENT_NAME, min_size=1, max_size=1, lazy_decoding=lazy_decoding
        )
    service = FinalAnswerService(reader, None)
    transport = httpx.ASGITransport(app=create_app(lambda: service))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        try:
            response = await client.get(route(thread.thread_id))
            assert reader.cut
            assert_error(response, 503, "store_unavailable", retryable=True)
            assert response.headers["retry-after"]
            # A new connection answers the next request.
            again = await client.get(route(thread.thread_id))
            assert again.status_code == 200, again.text
            assert again.json()["content"] == "the answer"
        finally:
            await service.close()
