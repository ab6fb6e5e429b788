"""Where the checkpoints are: the store a langgraph API server was configured with, found
in its own process (no path or URI setting to keep in step with the host's), or the one
the environment names; a ``StoreAddress`` opens its own direct, read-only reader."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evoscientist_final_answer import settings
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader

ADAPTER_MODULE = "langgraph_api._checkpointer._adapter"
# seq, name, file of every database the connection has attached; ``main`` is the saver's.
DATABASE_LIST_SQL = "PRAGMA database_list"
# Connection parameters a pool may hold as keyword arguments instead of in its conninfo.
CONNINFO_KEYWORDS = ("host", "hostaddr", "port", "dbname", "user", "password", "sslmode")


@dataclass(frozen=True)
class StoreAddress:
    """Exactly one of the two is set."""

    sqlite_path: Path | None = None
    postgres_conninfo: str | None = None

    @property
    def shared(self) -> bool:
        """Other servers may write the same store (PostgreSQL): a run one server does
        not know may be alive on another."""
        return self.postgres_conninfo is not None

    def reader(self, agent: str | None) -> CheckpointAnswerReader:
        """The direct read of this store, of ``agent``'s rows (None: every graph's)."""
        if self.sqlite_path is not None:
            return SqliteAnswerReader(self.sqlite_path, agent)
        # Imported only here: a host without PostgreSQL never loads psycopg.
        from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader

        return PostgresAnswerReader(self.postgres_conninfo, agent)


def environment_store() -> StoreAddress:
    """PostgreSQL when ``EVOSCIENTIST_DATABASE_URI`` is set, else ``sessions.db``."""
    uri = settings.database_uri()
    if uri is not None:
        return StoreAddress(postgres_conninfo=uri)
    return StoreAddress(sqlite_path=settings.sessions_db_path())


async def host_store() -> StoreAddress | None:
    """The store the server was configured with (its checkpointer's, untold), or None
    when it is none we read: its own in-memory store, a saver of another kind."""
    saver = await host_saver()
    return None if saver is None else await store_of(saver)


async def host_saver() -> Any | None:
    """The saver the server's ``checkpointer.path`` factory yielded, or ``None`` when the
    server has no custom checkpointer (or is not a langgraph API server).

    A host names its checkpointer in ``langgraph.json`` (a factory of a saver);
    langgraph-api enters that factory when it starts and keeps the saver it yields, per
    thread, in ``langgraph_api._checkpointer._adapter.CHECKPOINTER_STACK.inner``
    (0.16.x)."""
    adapter = sys.modules.get(ADAPTER_MODULE)
    if adapter is None or getattr(adapter, "CUSTOM_CHECKPOINTER", None) is None:
        return None
    inner = getattr(getattr(adapter, "CHECKPOINTER_STACK", None), "inner", None)
    if inner is None:
        # This thread has not entered the factory yet (the server enters it once per
        # thread that asks): ask the server's own accessor, which does.
        from langgraph_api._checkpointer import get_checkpointer

        adapted = await get_checkpointer()
        inner = getattr(adapted, "_inner", adapted)
    return inner


async def store_of(saver: Any) -> StoreAddress | None:
    """Where ``saver`` keeps its checkpoints, when it is a store we read: an
    ``AsyncSqliteSaver`` (or a subclass, such as upstream's pruning saver), the file its
    ``aiosqlite`` connection has open (``PRAGMA database_list``); an
    ``AsyncPostgresSaver``, its pool's (or connection's) conninfo. Anything else (the
    server's own in-memory store, a saver we cannot read): None, and the route reads
    through the server's API."""
    conn = getattr(saver, "conn", None)
    if conn is None:
        return None
    sqlite = await _sqlite_file(conn)
    if sqlite is not None:
        return StoreAddress(sqlite_path=sqlite)
    conninfo = _postgres_conninfo(conn)
    if conninfo is not None:
        return StoreAddress(postgres_conninfo=conninfo)
    return None


async def _sqlite_file(conn: Any) -> Path | None:
    import aiosqlite

    if not isinstance(conn, aiosqlite.Connection):
        return None
    # A read of the connection's own catalogue: no transaction, no write.
    rows = await conn.execute_fetchall(DATABASE_LIST_SQL)
    for _seq, name, file in rows:
        if name == "main" and file:
            return Path(file)
    return None  # an in-memory database: nothing another connection can open


def _postgres_conninfo(conn: Any) -> str | None:
    # Only when the host imported psycopg itself: a host without PostgreSQL never loads it.
    if "psycopg" not in sys.modules:
        return None
    from psycopg import AsyncConnection
    from psycopg.conninfo import make_conninfo

    if isinstance(conn, AsyncConnection):
        info = conn.info
        return make_conninfo(info.dsn, password=info.password)
    if "psycopg_pool" in sys.modules:
        from psycopg_pool import AsyncConnectionPool

        if isinstance(conn, AsyncConnectionPool):
            kwargs = {k: v for k, v in (conn.kwargs or {}).items() if k in CONNINFO_KEYWORDS}
            return make_conninfo(conn.conninfo, **kwargs)
    return None
