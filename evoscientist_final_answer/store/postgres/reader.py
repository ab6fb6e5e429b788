"""Read a thread's final answer straight from the PostgreSQL checkpointer's tables, for API
servers sharing one database (``EVOSCIENTIST_DATABASE_URI``): any server's route reads
the answer of a thread whichever server ran it. Mirrors ``store/sqlite/reader.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import psycopg.errors
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg_pool import AsyncConnectionPool

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store.base import CACHE_SIZE, CheckpointAnswerReader, Head
from evoscientist_final_answer.store.decoding import decode, decode_parts
from evoscientist_final_answer.store.deleted_runs import POSTGRES_DELETED_SQL
from evoscientist_final_answer.store.lru import LruCache
from evoscientist_final_answer.store.messages import saver_answer
from evoscientist_final_answer.store.postgres.blobs import blob_cursor
from evoscientist_final_answer.store.postgres.connection import (
    POOL_MAX_SIZE,
    POOL_MIN_SIZE,
    POOL_TIMEOUT_SECONDS,
    ReadOnlyPool,
    store_failure,
)
from evoscientist_final_answer.store.postgres.history import HistoryWalker, check_pruned
from evoscientist_final_answer.store.postgres.parts import (
    NO_THREAD,
    PostgresParts,
    checkpoint_params,
    prepare,
    with_checkpoint_row,
)
from evoscientist_final_answer.store.watch import ThreadWatch

# The newest root-namespace checkpoint (subgraph checkpoints never answer) that this
# agent wrote (another agent's rows never answer) — for an authenticated user, one that
# user's run wrote (langgraph-api records ``langgraph_auth_user_id`` in the metadata) —
# picked first by a backward scan of the primary key; then a signature of what is
# stored against it: how many writes, and the sum of the ``xmin`` of the checkpoint row
# and of each write row. A resume or an interrupt lands as a write without a new
# checkpoint, and an upsert that replaces a row gives it a new ``xmin``; either changes
# the signature.
# What is stored against a head ``h`` (its thread_id and checkpoint_id).
_WRITES_SIGNATURE = """
CROSS JOIN LATERAL (
  SELECT count(*) AS writes, coalesce(sum(cw.xmin::text::bigint), 0)::bigint AS versions
  FROM checkpoint_writes cw
  WHERE cw.thread_id = h.thread_id AND cw.checkpoint_ns = ''
    AND cw.checkpoint_id = h.checkpoint_id
) w
"""
_HEAD_SQL = """
WITH head AS (
  SELECT c.thread_id, c.checkpoint_id, c.xmin::text::bigint AS version
  FROM checkpoints c
  WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = ''
    AND coalesce(c.metadata ->> 'agent_name', %(agent_name)s, '')
        = coalesce(%(agent_name)s, c.metadata ->> 'agent_name', '')
    {run_filter}
    {user_filter}
  ORDER BY c.checkpoint_id DESC LIMIT 1
)
SELECT '{kind}' AS kind,
       h.checkpoint_id,
       w.writes,
       h.version + w.versions AS version
FROM head h
{writes_signature}"""
_RUN_FILTER = "AND c.metadata ->> 'run_id' = %(run_id)s"
_USER_FILTER = "AND c.metadata ->> 'langgraph_auth_user_id' = %(user_id)s"


def head_sql(*, run: bool, user: bool) -> str:
    """The head query; its parameters: thread_id, agent_name[, run_id][, user_id]."""
    return _HEAD_SQL.format(
        kind="run" if run else "thread",
        run_filter=_RUN_FILTER if run else "",
        user_filter=_USER_FILTER if user else "",
        writes_signature=_WRITES_SIGNATURE,
    )


HEAD_SQL = head_sql(run=False, user=False)
RUN_HEAD_SQL = head_sql(run=True, user=False)
# A run's head and its thread's, in one round trip: the thread's is what a long-poll on
# the run compares the watcher's polls with (``change_token``).
RUN_AND_THREAD_HEAD_SQL = f"({RUN_HEAD_SQL}) UNION ALL ({HEAD_SQL})"
# The heads of every thread a long-poll waits on, in one round trip: the same query
# per thread (``LATERAL``), so each is still a backward scan of the primary key.
WATCH_SQL = (
    """
SELECT h.thread_id, h.checkpoint_id, w.writes, h.version + w.versions AS version
FROM unnest(%(thread_ids)s::text[]) AS t(thread_id)
CROSS JOIN LATERAL (
  SELECT c.thread_id, c.checkpoint_id, c.xmin::text::bigint AS version
  FROM checkpoints c
  WHERE c.thread_id = t.thread_id AND c.checkpoint_ns = ''
    AND coalesce(c.metadata ->> 'agent_name', %(agent_name)s, '')
        = coalesce(%(agent_name)s, c.metadata ->> 'agent_name', '')
  ORDER BY c.checkpoint_id DESC LIMIT 1
) h
"""
    + _WRITES_SIGNATURE
)
# One snapshot for a whole decode (checkpoint, pending writes, DeltaChannel history).
SNAPSHOT_SQL = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
# Checkpoint rows read with their head and not decoded yet (a first read decodes its
# head's at once; one a newer head superseded is dropped, oldest first).
PREFETCHED_ROWS = 8
# How often waiting requests look for a new head. One query serves every waiting
# thread; PostgreSQL has no cheap change counter like SQLite's ``data_version``.
CHANGE_POLL_SECONDS = 0.05


class PostgresAnswerReader(CheckpointAnswerReader):
    """A pool of read-only connections to the checkpointer's PostgreSQL database.

    Unlike SQLite's reader: the head is one indexed query that filters agent, run and user
    in SQL, and on a thread's first read brings the checkpoint's row along
    (``parts.with_checkpoint_row``); an unchanged head is answered from the cache but asked
    each time (PostgreSQL has no cheap change counter), and long-polls are woken by one task
    polling every waited-on thread's head. The full decode runs in one ``REPEATABLE READ,
    READ ONLY`` transaction, so its statements share a snapshot.

    Schema, as ``AsyncPostgresSaver.setup()`` creates it: ``checkpoints`` (``metadata``
    JSONB, primary key ``(thread_id, checkpoint_ns, checkpoint_id)``), ``checkpoint_blobs``
    (channel values by version; never updated) and ``checkpoint_writes`` (upserted in place
    for the special channels such as ``__error__``/``__interrupt__``/``__resume__``; no
    rowid, so a replaced row is told by its ``xmin``, the transaction that wrote it)."""

    def __init__(
        self,
        uri: str,
        agent_name: str | None,
        *,
        min_size: int = POOL_MIN_SIZE,
        max_size: int = POOL_MAX_SIZE,
        timeout: float = POOL_TIMEOUT_SECONDS,
        lazy_decoding: bool = True,
    ) -> None:
        super().__init__(agent_name)
        self.lazy_decoding = lazy_decoding
        self._history = HistoryWalker()
        # Threads decoded since the answers were last forgotten, and checkpoint rows read
        # with a head (``with_checkpoint_row``), by ``(thread, head)``, for the decode.
        self._decoded_threads: LruCache[str, bool] = LruCache(CACHE_SIZE)
        self._prefetched: LruCache[tuple[str, Head], dict[str, Any]] = LruCache(PREFETCHED_ROWS)
        self.uri = uri
        self._db = ReadOnlyPool(
            uri, min_size=min_size, max_size=max_size, timeout=timeout, configure=self._prepare
        )
        # One query per poll checks every thread a long-poll waits on.
        self.watch = ThreadWatch(self._watch_heads, _pause, idle_cap=CHANGE_POLL_SECONDS)

    # -- connections ----------------------------------------------------------------

    @property
    def _pool(self) -> AsyncConnectionPool | None:
        return self._db.pool

    async def _open(self) -> AsyncConnectionPool:
        return await self._db.open()

    async def close(self) -> None:
        await self.watch.close()
        await self._db.close()

    async def _prepare(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """A new connection's statements prepared before it serves (``parts.prepare``),
        the head a first read runs with them; no thread is read."""
        params = {"thread_id": NO_THREAD, "agent_name": self.agent_name, **checkpoint_params()}
        try:
            async with blob_cursor(conn) as cur:
                await cur.execute(with_checkpoint_row(HEAD_SQL), params)
        except psycopg.Error:
            return  # no tables yet: the reads prepare their statements when they run
        await prepare(conn)

    # -- CheckpointAnswerReader -------------------------------------------------------

    async def head(
        self, thread_id: str, run_id: str | None, user_id: str | None = None
    ) -> Head | None:
        params: dict[str, Any] = {
            "thread_id": thread_id,
            "agent_name": self.agent_name,
            "run_id": run_id,
            "user_id": user_id,
        }
        if user_id is None:  # the thread's head comes too, for ``change_token``
            sql = RUN_AND_THREAD_HEAD_SQL if run_id is not None else HEAD_SQL
        else:
            sql = head_sql(run=run_id is not None, user=True)
        # A thread not decoded yet (a first read) will be: its checkpoint row comes in
        # the same statement. A repeat poll reads the head alone, no blob.
        prefetch = self.lazy_decoding and run_id is None and thread_id not in self._decoded_threads
        async with self._db.session() as conn:
            try:
                if prefetch:
                    async with blob_cursor(conn) as cur:
                        await cur.execute(
                            with_checkpoint_row(sql), {**params, **checkpoint_params()}
                        )
                        found = await cur.fetchall()
                else:
                    cur = await conn.execute(sql, params)
                    found = await cur.fetchall()
            except psycopg.errors.UndefinedTable:
                return None  # a database nothing has been written to holds no thread
        rows = {row["kind"]: _head(row) for row in found}
        if prefetch:
            for row in found:
                self._prefetched.put((thread_id, _head(row)), row)
        if user_id is None:
            self._remember(thread_id, rows.get("thread"))
        return rows.get("run" if run_id is not None else "thread")

    async def answer(self, thread_id: str, head: Head) -> FinalAnswer:
        async with self._db.session() as conn:
            # A saver per decode: its lock serialises only this connection's statements.
            saver = AsyncPostgresSaver(conn)

            async def lazily() -> FinalAnswer:
                # No transaction: each statement reads one snapshot, and what the second
                # (a DeltaChannel's history) reads lies below the checkpoint, written once.
                row = self._prefetched.pop((thread_id, head), None)
                parts = PostgresParts(
                    conn, saver.serde, thread_id, head.checkpoint_id, self._history, row
                )
                answer = await decode_parts(thread_id, parts)
                self._decoded_threads.put(thread_id, True)
                return answer

            async def fully() -> FinalAnswer:
                async with conn.transaction():
                    await conn.execute(SNAPSHOT_SQL)
                    return await self.full_answer(saver, thread_id, head.checkpoint_id)

            return await decode(
                thread_id,
                head.checkpoint_id,
                lazy_decode=lazily if self.lazy_decoding else None,
                full_decode=fully,
                store_failure=store_failure,
            )

    async def marked_deleted(self, run_id: str) -> bool:
        async with self._db.session() as conn:
            try:
                cur = await conn.execute(POSTGRES_DELETED_SQL, (run_id,))
                return await cur.fetchone() is not None
            except psycopg.errors.UndefinedTable:
                return False  # nothing was ever deleted from this database

    def forget_answers(self) -> None:
        super().forget_answers()
        self._decoded_threads.clear()
        self._prefetched.clear()

    def change_token(self, thread_id: str) -> object:
        """The thread's head as last seen (taken before a read that may be waited on)."""
        return self.watch.token(thread_id)

    async def wait_for_change(self, thread_id: str, since: object, timeout: float) -> None:
        """Return once the thread's head differs from ``since`` (a ``change_token``),
        at once if it already does, or after ``timeout``. One task polls the heads of
        every waited-on thread (``WATCH_SQL``) and wakes their waiters after each poll."""
        await self.watch.wait(thread_id, since, timeout)  # type: ignore[arg-type]

    async def _watch_heads(self, thread_ids: list[str]) -> dict[str, Any]:
        async with self._db.session() as conn:
            try:
                cur = await conn.execute(
                    WATCH_SQL, {"thread_ids": thread_ids, "agent_name": self.agent_name}
                )
                return {row["thread_id"]: _head(row) for row in await cur.fetchall()}
            except psycopg.errors.UndefinedTable:
                return {}

    def _remember(self, thread_id: str, head: Head | None) -> None:
        self.watch.remember(thread_id, head)

    # -- decoding ---------------------------------------------------------------------

    async def lazy_answer(
        self, saver: AsyncPostgresSaver, thread_id: str, checkpoint_id: str
    ) -> FinalAnswer:
        """Only the blobs that answer read (``PostgresParts``), only the newest messages
        built (``decoding.decode_parts``); ``lazy.Unexpected`` for a shape it leaves
        to ``full_answer``."""
        parts = PostgresParts(saver.conn, saver.serde, thread_id, checkpoint_id, self._history)
        return await decode_parts(thread_id, parts)

    async def full_answer(
        self, saver: AsyncPostgresSaver, thread_id: str, checkpoint_id: str
    ) -> FinalAnswer:
        """The saver decodes the checkpoint, its pending writes and its DeltaChannel
        history; the channel's reducer rebuilds the messages (as ``SqliteAnswerReader``)."""
        return await saver_answer(saver, thread_id, checkpoint_id, check=check_pruned)


async def _pause(timeout: float) -> None:
    await asyncio.sleep(CHANGE_POLL_SECONDS)


def _head(row: dict[str, Any]) -> Head:
    return Head(row["checkpoint_id"], (int(row["writes"]), int(row["version"])))
