"""The checkpointer ``langgraph.json`` hands to ``langgraph dev``.

Runs made through the API land in ``sessions.db``, the same file the TUI uses, so the
final-answer route reads one store whichever way a run was started.

With ``EVOSCIENTIST_DATABASE_URI=postgresql://…`` they land in that PostgreSQL
database instead (``AsyncPostgresSaver`` over a connection pool), which any number of
API servers can share; the route then reads the same database.

Both savers add the store maintenance langgraph-api asks of a custom checkpointer
(``aprune``, ``adelete_for_runs``, ``acopy_thread``: see ``evoscientist_final_answer.maintenance``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from EvoScientist import settings
from evoscientist_final_answer.maintenance.sqlite import MaintainedSqliteSaver
from evoscientist_final_answer.store.deleted_runs import recording_deletions

# The writer's pool. The saver serialises its own statements (one asyncio lock), so a
# few connections are plenty; the pool is there to reconnect after a failure.
POSTGRES_POOL_MIN_SIZE = 1
POSTGRES_POOL_MAX_SIZE = 4
# Servers starting together must not run the saver's migrations at the same time
# (they are not safe to run concurrently): they take turns on this advisory lock. A
# server waits for it by retrying, never inside a blocked statement: the migrations'
# CREATE INDEX CONCURRENTLY waits for every open transaction, a blocked one included,
# and the two would deadlock.
SETUP_LOCK_KEY = 0x45766F5363690001  # "EvoSci" + 1
SETUP_TRY_LOCK_SQL = "SELECT pg_try_advisory_lock(%s) AS locked"
# The newest migration applied: a schema already up to date needs no CREATE rights.
SCHEMA_VERSION_SQL = "SELECT max(v) AS v FROM checkpoint_migrations"
SETUP_UNLOCK_SQL = "SELECT pg_advisory_unlock(%s)"
SETUP_RETRY_SECONDS = 0.1
SETUP_TIMEOUT_SECONDS = 120.0


@asynccontextmanager
async def sessions_checkpointer() -> AsyncIterator[BaseCheckpointSaver]:
    settings.validate()  # a server without our routes (and their start-up check) too
    uri = settings.database_uri()
    if uri is not None:
        async with postgres_checkpointer(uri) as saver:
            yield saver
        return
    path = settings.sessions_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    async with MaintainedSqliteSaver.from_conn_string(str(path)) as saver:
        await saver.setup()
        yield saver


async def setup_postgres(uri: str) -> None:
    """Create or migrate the saver's tables, and the rollback's run-id index, one
    server at a time, unless they are up to date already (then the servers' user needs
    no right to create tables)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg.rows import dict_row

    from evoscientist_final_answer.maintenance.postgres import ensure_run_index, run_index_ready

    async with await AsyncConnection.connect(
        uri, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        latest = len(AsyncPostgresSaver.MIGRATIONS) - 1
        if await _schema_version(conn) == latest and await run_index_ready(conn):
            return
        deadline = time.monotonic() + SETUP_TIMEOUT_SECONDS
        while not await _try_setup_lock(conn):
            if time.monotonic() > deadline:
                raise TimeoutError("another server held the checkpoint setup lock too long")
            await asyncio.sleep(SETUP_RETRY_SECONDS)
        try:
            if await _schema_version(conn) != latest:
                await AsyncPostgresSaver(conn).setup()
            await ensure_run_index(conn)
        finally:
            await conn.execute(SETUP_UNLOCK_SQL, (SETUP_LOCK_KEY,))


async def _schema_version(conn: Any) -> int | None:
    from psycopg.errors import UndefinedTable

    try:
        row = await (await conn.execute(SCHEMA_VERSION_SQL)).fetchone()
    except UndefinedTable:
        return None
    return None if row is None else row["v"]


async def _try_setup_lock(conn: Any) -> bool:
    cur = await conn.execute(SETUP_TRY_LOCK_SQL, (SETUP_LOCK_KEY,))
    row = await cur.fetchone()
    return bool(row and row["locked"])


@asynccontextmanager
async def postgres_checkpointer(uri: str) -> AsyncIterator[BaseCheckpointSaver]:
    """An ``AsyncPostgresSaver`` (with store maintenance) over a pool on ``uri``, its
    tables set up."""
    # Imported here: a SQLite deployment never loads the PostgreSQL driver.
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    await setup_postgres(uri)
    async with AsyncConnectionPool(
        uri,
        min_size=POSTGRES_POOL_MIN_SIZE,
        max_size=POSTGRES_POOL_MAX_SIZE,
        timeout=settings.postgres_pool_timeout(),
        # What AsyncPostgresSaver.from_conn_string gives its own connection.
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        # A connection the server dropped (restart, failover) is replaced, not used.
        check=AsyncConnectionPool.check_connection,
        open=False,
    ) as pool:
        from evoscientist_final_answer.maintenance.postgres import MaintainedPostgresSaver

        # Each deletion marks its runs in the database for every server's route; this
        # server also remembers them, for a database user that may not create the table.
        yield recording_deletions(MaintainedPostgresSaver(pool))
