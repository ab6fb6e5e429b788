"""The answer reader's pool of read-only connections to PostgreSQL, and which failures are
the store's (``store_failure``). Mirrors ``store/sqlite/connection.py``; a pool, not one
connection, since each statement is a round trip to a server that runs many at once.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from evoscientist_final_answer.store.decoding import unreadable
from evoscientist_final_answer.store.errors import StoreUnavailable

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

Configure = Callable[[psycopg.AsyncConnection[Any]], Awaitable[None]]


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


class ReadOnlyPool:
    """A pool of read-only connections, opened on first use; ``configure`` runs on
    each new connection before it serves.

    Every connection opens with ``default_transaction_read_only=on`` (a GET never writes,
    whatever it runs) and prepares the first read's statements; a connection that just
    answered is not pinged on checkout. A data exception of the reader's own SQL is the
    row's fault (``CheckpointUnreadable``), not the store's."""

    def __init__(
        self,
        uri: str,
        *,
        min_size: int = POOL_MIN_SIZE,
        max_size: int = POOL_MAX_SIZE,
        timeout: float = POOL_TIMEOUT_SECONDS,
        configure: Configure | None = None,
    ) -> None:
        self.uri = uri
        self.min_size = min_size
        self.max_size = max_size
        self.timeout = timeout
        self.configure = configure
        self.pool: AsyncConnectionPool | None = None
        # When each pooled connection last answered a statement (``_check``).
        self._used: weakref.WeakKeyDictionary[psycopg.AsyncConnection[Any], float] = (
            weakref.WeakKeyDictionary()
        )
        self._open_lock = asyncio.Lock()

    async def open(self) -> AsyncConnectionPool:
        async with self._open_lock:
            if self.pool is None:
                pool = AsyncConnectionPool(
                    self.uri,
                    min_size=self.min_size,
                    max_size=self.max_size,
                    timeout=self.timeout,
                    kwargs=read_only_kwargs(self.uri),
                    check=self._check,
                    configure=self.configure,
                    open=False,
                    name="evoscientist-final-answer",
                )
                await pool.open(wait=False)
                self.pool = pool
            return self.pool

    async def close(self) -> None:
        async with self._open_lock:
            pool, self.pool = self.pool, None
        if pool is not None:
            await pool.close()

    async def _check(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """The pool's check on checkout: a ping, unless the connection just answered."""
        used = self._used.get(conn)
        if used is not None and time.monotonic() - used < RECENTLY_USED_SECONDS:
            return
        await AsyncConnectionPool.check_connection(conn)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection, with every failure to read turned into ``StoreUnavailable``."""
        try:
            pool = await self.open()
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


def store_failure(exc: Exception) -> bool:
    """The database could not be read (``decoding.StoreFailure``): psycopg's and the
    pool's errors (a connection lost, the server shutting down, a timeout) and the
    OS's. Not a data exception (SQLSTATE class 22): that is the reader's SQL refusing
    what a row holds (``jsonb_each_text`` of channel versions that are not an object),
    and asking again meets the same row."""
    return isinstance(exc, psycopg.Error | OSError) and not isinstance(exc, psycopg.DataError)
