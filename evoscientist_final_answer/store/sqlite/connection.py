"""The answer reader's one read-only connection to ``sessions.db``, and which failures are
the store's (``store_failure``). Mirrors ``store/postgres/connection.py``; one long-lived
connection on aiosqlite's thread, where PostgreSQL has a pool.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import stat
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from evoscientist_final_answer.store.errors import StoreDamaged, StoreUnavailable

logger = logging.getLogger(__name__)

# A page cache that keeps the primary-key pages warm while large blobs stream through
# (a repeat poll then reads nothing from the file), and blobs read through mmap.
READER_PRAGMAS = ("PRAGMA cache_size = -65536", "PRAGMA mmap_size = 268435456")
WRITES_HAVE_TASK_PATH_SQL = "SELECT 1 FROM pragma_table_info('writes') WHERE name = 'task_path'"
# How long a read waits on a writer's lock before giving up on this path.
BUSY_TIMEOUT_SECONDS = 1.0


def read_only_uri(path: Path) -> str:
    return f"file:{quote(str(path.resolve()))}?mode=ro"


class ReadOnlyConnection:
    """One long-lived read-only connection (behind an ``AsyncSqliteSaver``), reopened
    after failures.

    Opened ``mode=ro``, never ``setup()``; retired after a failure and closed once no
    request reads through it, reopened when another file is renamed over the path. Its
    reads skip the saver's lock and run dependent statements in one trip to aiosqlite's
    thread (``fetch``, ``in_one_trip``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.saver: AsyncSqliteSaver | None = None
        self.conn: aiosqlite.Connection | None = None
        self._open_lock = asyncio.Lock()
        self._identity: tuple[int, int] | None = None  # the file the connection reads
        # Requests using each connection, and connections replaced after a failure:
        # one is closed only once no request still reads through it.
        self._users: dict[AsyncSqliteSaver, int] = {}
        self._retired: set[AsyncSqliteSaver] = set()

    async def open(self) -> AsyncSqliteSaver:
        async with self._open_lock:
            if self.saver is not None:
                return self.saver
            identity = _file_identity(self.path)
            if identity is None:
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
                for pragma in READER_PRAGMAS:  # per connection; nothing is written
                    await conn.execute(pragma)
                saver.is_setup = True
            except BaseException:
                await conn.close()
                raise
            self.conn, self.saver, self._identity = conn, saver, identity
            return saver

    async def close(self) -> None:
        async with self._open_lock:
            conn, self.conn, self.saver = self.conn, None, None
            retired, self._retired = self._retired, set()
        for old in retired:
            await old.conn.close()
        if conn is not None:
            await conn.close()

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSqliteSaver]:
        """The saver, with every failure to read the file turned into
        ``StoreUnavailable``.

        A busy store (another process's lock) leaves the connection as it is; any other
        failure retires it — the next request opens a fresh one, and the old one is
        closed once the requests still reading through it are done (closing it under
        them would fail them too).
        """
        try:
            saver = await self.open()
        except (StoreUnavailable, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise _unavailable(exc) from exc
        self._users[saver] = self._users.get(saver, 0) + 1
        try:
            yield saver
        except (StoreUnavailable, asyncio.CancelledError):
            raise
        except Exception as exc:
            if not _busy(exc):
                await self.retire(saver)
            raise _unavailable(exc) from exc
        finally:
            self._users[saver] -= 1
            if not self._users[saver]:
                del self._users[saver]
                if saver in self._retired:
                    self._retired.discard(saver)
                    await saver.conn.close()

    async def follow_replaced_file(self) -> bool:
        """A connection keeps reading the file it opened, even once another file has
        been renamed over its path (a restored backup) or it has been deleted: then the
        next request opens whatever is at the path now. True when the connection was
        retired for that (what was learnt from the old file is then stale)."""
        saver = self.saver
        if saver is None or _file_identity(self.path) == self._identity:
            return False
        logger.warning("%s was replaced or removed; reopening", self.path)
        await self.retire(saver)
        return True

    async def retire(self, saver: AsyncSqliteSaver) -> None:
        """The next request opens a fresh connection; this one is closed now if no
        request reads through it, else by the last one that does (``session``)."""
        async with self._open_lock:
            if self.saver is not saver:
                return
            self.conn, self.saver = None, None
            if self._users.get(saver):
                self._retired.add(saver)
                return
        await saver.conn.close()


async def fetch(saver: AsyncSqliteSaver, sql: str, params: Sequence[Any]) -> list[sqlite3.Row]:
    # One trip to aiosqlite's thread (execute, fetch and close in one call): each
    # trip costs two wake-ups, which dominate a cached poll. Not under the saver's
    # lock: aiosqlite's thread already runs trips one at a time, and the lock made a
    # burst of reads queue on the event loop instead, each waiting for the one before
    # it to be resumed and let go (20–50 ms a trip, measured with ten runs finishing
    # at once). A trip between the steps of the saver's own cursor reads is safe:
    # the connection is read-only, and each statement has its own cursor.
    return list(await saver.conn.execute_fetchall(sql, params))


T = TypeVar("T")


async def in_one_trip(saver: AsyncSqliteSaver, work: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``work`` on aiosqlite's own thread, with its ``sqlite3`` connection: dependent
    statements (ids, then the rows they name) in one trip instead of one each. Under a
    burst of finishing runs each trip waits for aiosqlite's thread to get the GIL from
    the busy event loop, then for the loop to take its result (milliseconds each); a
    read of a new head made five of them. ``work`` must touch nothing the event loop
    mutates. Not under the saver's lock, as for ``fetch``.

    aiosqlite has no public call for this; ``_execute`` is the one its own
    ``execute_fetchall`` uses (the version is pinned, and every read goes through here,
    so a change would fail the whole suite)."""
    conn = saver.conn
    return await conn._execute(lambda: work(conn._conn))


def connection_gone(exc: Exception) -> bool:
    """aiosqlite's own errors for a connection closed under a read (a reset elsewhere)."""
    return isinstance(exc, ValueError) and str(exc) in ("Connection closed", "no active connection")


def store_failure(exc: Exception) -> bool:
    """The file could not be read (``decoding.StoreFailure``): SQLite's errors (a lock,
    a corrupt page: ``session`` tells them apart), the OS's, a connection closed under
    the read. Anything else a decode raises came from the bytes it read."""
    return isinstance(exc, sqlite3.Error | OSError) or connection_gone(exc)


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def _busy(exc: BaseException) -> bool:
    """Another connection holds the lock this read needs: the connection is fine."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "is locked" in str(exc)


def _damaged(exc: BaseException) -> bool:
    """The file is not a database, or its pages do not hold together: no retry heals
    that (a truncated copy, a disk error), unlike a lock."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or any(
        text in str(exc) for text in ("file is not a database", "disk image is malformed")
    )


def _unavailable(exc: Exception) -> StoreUnavailable:
    error = StoreDamaged if _damaged(exc) else StoreUnavailable
    return error(f"{type(exc).__name__}: {exc}")
