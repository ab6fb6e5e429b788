"""Read a thread's final answer straight from the PostgreSQL checkpointer's tables.

Used when ``EVOSCIENTIST_DATABASE_URI`` points the API servers at one PostgreSQL
database: whichever server ran the thread, any server's route reads its answer there.

Every connection of the reader's pool opens with ``default_transaction_read_only=on``,
so a GET never writes, whatever it runs. The head (which checkpoint answers, and a
signature of the writes against it) is one indexed query; an unchanged head is answered
from the cache.

Decoding reads only the blobs that answer and builds only the newest messages
(``evoscientist_final_answer.store.postgres.lazy``): one statement for the checkpoint, its blobs and
its status writes, one for a DeltaChannel's history below it (ancestors, their message
writes, a snapshot blob: rows written once and never changed, so two snapshots read
them alike; a thread deleted in between shows as an empty chain), and for a large
snapshot one asking the server whether it holds the ids the answer reaches. A shape that path
does not know goes to ``AsyncPostgresSaver``'s own decode (``aget_tuple``,
``aget_delta_channel_history`` and the channel's reducer,
``evoscientist_final_answer.store.messages``)
in one ``REPEATABLE READ, READ ONLY`` transaction, so its statements share a snapshot.

Schema, as ``AsyncPostgresSaver.setup()`` creates it: ``checkpoints`` (``metadata``
JSONB, primary key ``(thread_id, checkpoint_ns, checkpoint_id)``), ``checkpoint_blobs``
(channel values by version; never updated) and ``checkpoint_writes`` (upserted in place
for the special channels such as ``__error__``/``__interrupt__``/``__resume__``; no
rowid, so a replaced row is told by its ``xmin``, the transaction that wrote it).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import psycopg.errors
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store.base import CACHE_SIZE, CheckpointAnswerReader, Head
from evoscientist_final_answer.store.decoding import decode, unreadable
from evoscientist_final_answer.store.deleted_runs import POSTGRES_DELETED_SQL
from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.lru import LruCache
from evoscientist_final_answer.store.messages import saver_answer
from evoscientist_final_answer.store.postgres.blobs import blob_cursor
from evoscientist_final_answer.store.postgres.history import check_pruned
from evoscientist_final_answer.store.postgres.lazy import (
    NO_THREAD,
    LazyDecoder,
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
# Given to every connection of the reader's pool: nothing it runs can write.
READ_ONLY_OPTION = "-c default_transaction_read_only=on"

# How long a request waits for a pooled connection (the server down, the pool busy)
# before this path gives up (a 503, or the API fallback).
POOL_TIMEOUT_SECONDS = 3.0
CONNECT_TIMEOUT_SECONDS = 3
POOL_MIN_SIZE = 1
POOL_MAX_SIZE = 8
# A connection that answered a statement this recently is not pinged on checkout: the
# ping is a round trip, a third of a cached poll's cost. One the server dropped within
# that window fails its next statement instead (that request is a retryable 503, or
# the API answers it), and the pool replaces the broken connection; an idle one is
# pinged, so a restart or a failover is met by a fresh connection.
RECENTLY_USED_SECONDS = 1.0
# Checkpoint rows read with their head and not decoded yet (a first read decodes its
# head's at once; one a newer head superseded is dropped, oldest first).
PREFETCHED_ROWS = 8
# How often waiting requests look for a new head. One query serves every waiting
# thread; PostgreSQL has no cheap change counter like SQLite's ``data_version``.
CHANGE_POLL_SECONDS = 0.05


def read_only_kwargs(uri: str) -> dict[str, Any]:
    """Connection arguments for the reader: the saver's own, and read-only sessions
    (``options`` already in the URI are kept)."""
    options = conninfo_to_dict(uri).get("options")
    return {
        "autocommit": True,
        "prepare_threshold": 0,
        "row_factory": dict_row,
        "connect_timeout": CONNECT_TIMEOUT_SECONDS,
        "options": f"{options} {READ_ONLY_OPTION}" if options else READ_ONLY_OPTION,
    }


class PostgresAnswerReader(CheckpointAnswerReader):
    """A pool of read-only connections to the checkpointer's PostgreSQL database."""

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
        self._lazy = LazyDecoder()
        # Threads decoded since the answers were last forgotten, and checkpoint rows read
        # with a head (``with_checkpoint_row``), by ``(thread, head)``, for the decode.
        self._decoded_threads: LruCache[str, bool] = LruCache(CACHE_SIZE)
        self._prefetched: LruCache[tuple[str, Head], dict[str, Any]] = LruCache(PREFETCHED_ROWS)
        self.uri = uri
        self.min_size = min_size
        self.max_size = max_size
        self.timeout = timeout
        self._pool: AsyncConnectionPool | None = None
        # When each pooled connection last answered a statement (``_check``).
        self._used: weakref.WeakKeyDictionary[psycopg.AsyncConnection[Any], float] = (
            weakref.WeakKeyDictionary()
        )
        self._open_lock = asyncio.Lock()
        # One query per poll checks every thread a long-poll waits on.
        self.watch = ThreadWatch(self._watch_heads, _pause, idle_cap=CHANGE_POLL_SECONDS)

    # -- connections ----------------------------------------------------------------

    async def _open(self) -> AsyncConnectionPool:
        async with self._open_lock:
            if self._pool is None:
                pool = AsyncConnectionPool(
                    self.uri,
                    min_size=self.min_size,
                    max_size=self.max_size,
                    timeout=self.timeout,
                    kwargs=read_only_kwargs(self.uri),
                    check=self._check,
                    configure=self._prepare,
                    open=False,
                    name="evoscientist-final-answer",
                )
                await pool.open(wait=False)
                self._pool = pool
            return self._pool

    async def close(self) -> None:
        await self.watch.close()
        async with self._open_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def _prepare(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """A new connection's statements prepared before it serves (``postgres_lazy.
        prepare``), the head a first read runs with them; no thread is read."""
        params = {"thread_id": NO_THREAD, "agent_name": self.agent_name, **checkpoint_params()}
        try:
            async with blob_cursor(conn) as cur:
                await cur.execute(with_checkpoint_row(HEAD_SQL), params)
        except psycopg.Error:
            return  # no tables yet: the reads prepare their statements when they run
        await prepare(conn)

    async def _check(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """The pool's check on checkout: a ping, unless the connection just answered."""
        used = self._used.get(conn)
        if used is not None and time.monotonic() - used < RECENTLY_USED_SECONDS:
            return
        await AsyncConnectionPool.check_connection(conn)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection, with every failure to read turned into ``StoreUnavailable``."""
        try:
            pool = await self._open()
            async with pool.connection() as conn:
                yield conn
                self._used[conn] = time.monotonic()
        except (StoreUnavailable, asyncio.CancelledError):
            raise  # a decode's failure is told already (``decoding``)
        except PoolTimeout as exc:
            raise StoreUnavailable(f"PostgreSQL unreachable: {exc}") from exc
        except psycopg.Error as exc:
            if not store_failure(exc):
                # The head query, which brings the checkpoint's row along on a first
                # read, refused what that row holds: the row, not the store, is at fault.
                raise unreadable("the newest checkpoint's row", exc) from exc
            raise StoreUnavailable(f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            raise StoreUnavailable(f"{type(exc).__name__}: {exc}") from exc

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
        async with self._connection() as conn:
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
        async with self._connection() as conn:
            # A saver per decode: its lock serialises only this connection's statements.
            saver = AsyncPostgresSaver(conn)

            async def lazily() -> FinalAnswer:
                # No transaction: each statement reads one snapshot, and what the second
                # (a DeltaChannel's history) reads lies below the checkpoint, written once.
                row = self._prefetched.pop((thread_id, head), None)
                answer = await self._lazy.answer(
                    conn, saver.serde, thread_id, head.checkpoint_id, row
                )
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
        async with self._connection() as conn:
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
        async with self._connection() as conn:
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
        """Only the blobs that answer, only the newest messages built
        (``evoscientist_final_answer.store.postgres.lazy``); ``lazy.Unexpected`` for a shape it
        leaves to ``full_answer``."""
        return await self._lazy.answer(saver.conn, saver.serde, thread_id, checkpoint_id)

    async def full_answer(
        self, saver: AsyncPostgresSaver, thread_id: str, checkpoint_id: str
    ) -> FinalAnswer:
        """The saver decodes the checkpoint, its pending writes and its DeltaChannel
        history; the channel's reducer rebuilds the messages (as ``SqliteAnswerReader``)."""
        return await saver_answer(saver, thread_id, checkpoint_id, check=check_pruned)


def store_failure(exc: Exception) -> bool:
    """The database could not be read (``decoding.StoreFailure``): psycopg's and the
    pool's errors (a connection lost, the server shutting down, a timeout) and the
    OS's. Not a data exception (SQLSTATE class 22): that is the reader's SQL refusing
    what a row holds (``jsonb_each_text`` of channel versions that are not an object),
    and asking again meets the same row."""
    return isinstance(exc, psycopg.Error | OSError) and not isinstance(exc, psycopg.DataError)


async def _pause(timeout: float) -> None:
    await asyncio.sleep(CHANGE_POLL_SECONDS)


def _head(row: dict[str, Any]) -> Head:
    return Head(row["checkpoint_id"], (int(row["writes"]), int(row["version"])))
