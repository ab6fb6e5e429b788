"""The least a restarted server's first read of a DeltaChannel thread must do, timed on its
own: read the snapshot's bytes once, on a fresh connection, and look for the answer's id
in them (in memory on SQLite, on the server for PostgreSQL). Only the snapshot can tell
whether a later write replaced one of its messages.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiosqlite
import psycopg

from evoscientist_final_answer.store import delta
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.sqlite.connection import READER_PRAGMAS, read_only_uri

Floor = Callable[[], Awaitable[float]]

SQLITE_SNAPSHOT_SQL = """
SELECT checkpoint FROM checkpoints
WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?
"""
POSTGRES_SNAPSHOT_SQL = """
SELECT position(%(id)s IN blob) AS found FROM checkpoint_blobs
WHERE thread_id = %(thread_id)s AND checkpoint_ns = '' AND channel = 'messages'
  AND version = %(version)s
"""
# A thread no store holds: its lookup loads the connection's schema, not the thread.
WARM_UP_THREAD = "bench-warm-up-no-such-thread"


async def snapshot_of(reader: CheckpointAnswerReader, thread_id: str) -> tuple[str, bytes] | None:
    """(where the thread's snapshot lies: its checkpoint id or blob version, the
    answer's message id), from ``reader``'s read of it; None without a snapshot."""
    answer = await reader.read(thread_id)
    seeds = reader._history.seeds  # type: ignore[attr-defined]
    kept = [key for thread, key in seeds if thread == thread_id]
    if not kept or answer.message_id is None:
        return None
    return kept[-1], answer.message_id.encode()


def sqlite_floor(db: Path, thread_id: str, checkpoint_id: str, answer_id: bytes) -> Floor:
    """The snapshot's checkpoint row read into memory on a fresh connection, scanned for the
    answer's id (``delta.packed_among``)."""

    async def sample() -> float:
        async with aiosqlite.connect(read_only_uri(db), uri=True) as conn:
            for pragma in READER_PRAGMAS:
                await conn.execute(pragma)
            await conn.execute_fetchall(SQLITE_SNAPSHOT_SQL, (WARM_UP_THREAD, ""))
            started = time.perf_counter()
            rows = await conn.execute_fetchall(SQLITE_SNAPSHOT_SQL, (thread_id, checkpoint_id))
            delta.packed_among(next(iter(rows))[0], [answer_id])
            return time.perf_counter() - started

    return sample


def postgres_floor(uri: str, thread_id: str, version: str, answer_id: bytes) -> Floor:
    """The same scan on the server (``position``): the blob detoasted there, nothing sent."""
    from evoscientist_final_answer.store.postgres.connection import read_only_kwargs

    async def sample() -> float:
        conn = await psycopg.AsyncConnection.connect(uri, **read_only_kwargs(uri))
        try:
            params = {"thread_id": WARM_UP_THREAD, "version": "", "id": answer_id}
            await conn.execute(POSTGRES_SNAPSHOT_SQL, params)
            started = time.perf_counter()
            params.update(thread_id=thread_id, version=version)
            await (await conn.execute(POSTGRES_SNAPSHOT_SQL, params)).fetchone()
            return time.perf_counter() - started
        finally:
            await conn.close()

    return sample
