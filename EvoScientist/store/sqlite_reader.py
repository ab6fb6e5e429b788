"""Read a thread's final answer straight from ``sessions.db``.

The file is opened read-only (``mode=ro``): a GET never writes to the store and never
creates it. The checkpoint itself is decoded by ``AsyncSqliteSaver`` (its serializer,
its pending-writes query, its DeltaChannel history walk); only the choice of which
checkpoint answers is made here, with the SQL below.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import quote

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from EvoScientist.answer.result import FinalAnswer, answer_from_checkpoint, pending_answer
from EvoScientist.store.errors import StoreUnavailable, ThreadNotFound
from EvoScientist.store.messages import checkpoint_messages

logger = logging.getLogger(__name__)

# Root namespace only (subgraph checkpoints never answer); rows another agent wrote
# into a shared thread never answer either. Both use the primary key's prefix.
_ELIGIBLE = """
    thread_id = ? AND checkpoint_ns = ''
    AND coalesce(json_extract(CAST(metadata AS TEXT), '$.agent_name'), ?) = ?
"""
LATEST_CHECKPOINT_SQL = f"""
SELECT checkpoint_id FROM checkpoints
WHERE {_ELIGIBLE}
ORDER BY checkpoint_id DESC LIMIT 1
"""
LATEST_RUN_CHECKPOINT_SQL = f"""
SELECT checkpoint_id FROM checkpoints
WHERE {_ELIGIBLE} AND json_extract(CAST(metadata AS TEXT), '$.run_id') = ?
ORDER BY checkpoint_id DESC LIMIT 1
"""
NO_CHECKPOINTS_TABLE = "no such table: checkpoints"
WRITES_HAVE_TASK_PATH_SQL = "SELECT 1 FROM pragma_table_info('writes') WHERE name = 'task_path'"

# How long a read waits on a writer's lock before giving up on this path.
BUSY_TIMEOUT_SECONDS = 1.0


def read_only_uri(path: Path) -> str:
    return f"file:{quote(str(path.resolve()))}?mode=ro"


class SqliteAnswerReader:
    """One long-lived read-only connection to ``sessions.db``, reopened after failures."""

    def __init__(self, path: Path, agent_name: str) -> None:
        self.path = path
        self.agent_name = agent_name
        self._saver: AsyncSqliteSaver | None = None
        self._conn: aiosqlite.Connection | None = None
        self._open_lock = asyncio.Lock()

    async def _open(self) -> AsyncSqliteSaver:
        async with self._open_lock:
            if self._saver is not None:
                return self._saver
            if not self.path.is_file():
                raise StoreUnavailable(f"{self.path} does not exist")
            conn = await aiosqlite.connect(
                read_only_uri(self.path), uri=True, timeout=BUSY_TIMEOUT_SECONDS
            )
            try:
                saver = AsyncSqliteSaver(conn)
                # setup() would switch journal modes and create tables: writes. The
                # schema is the writer's business; learn the one thing it decides.
                async with conn.execute(WRITES_HAVE_TASK_PATH_SQL) as cur:
                    saver._has_task_path = await cur.fetchone() is not None
                saver.is_setup = True
            except BaseException:
                await conn.close()
                raise
            self._conn, self._saver = conn, saver
            return saver

    async def close(self) -> None:
        async with self._open_lock:
            conn, self._conn, self._saver = self._conn, None, None
        if conn is not None:
            await conn.close()

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[AsyncSqliteSaver]:
        """The saver, with every failure to read turned into ``StoreUnavailable``."""
        try:
            yield await self._open()
        except (ThreadNotFound, StoreUnavailable, asyncio.CancelledError):
            raise
        except (sqlite3.Error, ValueError, OSError) as exc:
            await self.close()
            raise StoreUnavailable(f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # an undecodable blob may raise anything
            await self.close()
            raise StoreUnavailable(f"unreadable checkpoint: {type(exc).__name__}: {exc}") from exc

    async def read(
        self, thread_id: str, run_id: str | None = None, thread_status: str | None = None
    ) -> FinalAnswer:
        async with self._session() as saver:
            checkpoint_id = await self._latest_checkpoint_id(saver, thread_id, run_id)
            if checkpoint_id is None:
                if run_id is not None and await self._latest_checkpoint_id(saver, thread_id, None):
                    return pending_answer(thread_id, run_id, "checkpointer")
                raise ThreadNotFound(thread_id)
            config = {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": "",
                    "checkpoint_id": checkpoint_id,
                }
            }
            tup = await saver.aget_tuple(config)
            if tup is None:  # pruned between the two queries
                raise StoreUnavailable(f"checkpoint {checkpoint_id} vanished while reading")
            messages = await checkpoint_messages(saver, tup)
            return answer_from_checkpoint(
                thread_id=thread_id,
                messages=messages,
                channel_values=tup.checkpoint.get("channel_values", {}),
                pending_writes=tup.pending_writes or [],
                metadata=tup.metadata,
                checkpoint_id=checkpoint_id,
                ts=tup.checkpoint.get("ts"),
                source="checkpointer",
                thread_status=thread_status,
            )

    async def _latest_checkpoint_id(
        self, saver: AsyncSqliteSaver, thread_id: str, run_id: str | None
    ) -> str | None:
        if run_id is None:
            sql, params = LATEST_CHECKPOINT_SQL, (thread_id, self.agent_name, self.agent_name)
        else:
            sql = LATEST_RUN_CHECKPOINT_SQL
            params = (thread_id, self.agent_name, self.agent_name, run_id)
        try:
            async with saver.lock, saver.conn.execute(sql, params) as cur:
                row = await cur.fetchone()
        except sqlite3.OperationalError as exc:
            if NO_CHECKPOINTS_TABLE in str(exc):
                return None  # a store nothing has been written to holds no thread
            raise
        return row[0] if row else None
