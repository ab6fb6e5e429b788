"""A rollback reads only its runs' rows and the rows after them: the run-id index the
saver's setup creates, and ranges of the primary key; never a scan of the table
(which cost 0.37 s per rollback at 200,000 rows, under the saver's lock)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator

import psycopg
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import sql as psql

from EvoScientist.checkpointer import sessions_checkpointer
from evoscientist_final_answer.maintenance import postgres, sqlite
from tests.support.factory_saver import factory_saver
from tests.support.postgres import (
    admin_uri,
    new_database_name,
    require_postgres,
    temporary_database,
    with_user,
)
from tests.support.seeds import Seeder, Store


@pytest.fixture
async def saver(
    store: Store, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BaseCheckpointSaver]:
    async with factory_saver(store, monkeypatch) as saver:
        await seeder.chat(["one", "two"])
        yield saver


def sqlite_plan(store: Store, sql: str, params: tuple[str, ...]) -> list[str]:
    with sqlite3.connect(f"file:{store.path}?mode=ro", uri=True) as conn:
        rows = conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
    conn.close()
    return [row[3] for row in rows]


@pytest.mark.backends("sqlite")
async def test_sqlite_rollback_queries_search_indexes(
    store: Store, saver: BaseCheckpointSaver
) -> None:
    steps = sqlite_plan(store, sqlite.RUN_ROWS_SQL, ('["a-run"]',))
    assert any(s.startswith("SEARCH checkpoints USING INDEX checkpoints_run_id") for s in steps)
    steps = sqlite_plan(store, sqlite.LATER_ROWS_SQL, ("t", "", "c"))
    assert [s for s in steps if "checkpoints" in s] == [
        "SEARCH checkpoints USING INDEX sqlite_autoindex_checkpoints_1 "
        "(thread_id=? AND checkpoint_ns=? AND checkpoint_id>?)"
    ]


async def postgres_plan(store: Store, sql: str, params: tuple[object, ...]) -> str:
    async with await psycopg.AsyncConnection.connect(store.uri, autocommit=True) as conn:
        # A handful of rows: without this the planner rightly prefers a scan.
        await conn.execute("SET enable_seqscan = off")
        cur = await conn.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in await cur.fetchall())


@pytest.mark.backends("postgres")
async def test_postgres_rollback_queries_use_indexes(
    store: Store, saver: BaseCheckpointSaver
) -> None:
    plan = await postgres_plan(store, postgres.RUN_ROWS_SQL, (["a-run"],))
    assert postgres.RUN_INDEX_NAME in plan, plan
    plan = await postgres_plan(store, postgres.LATER_ROWS_SQL, ("t", "", "c"))
    assert "checkpoints_pkey" in plan, plan


async def test_a_server_that_does_not_own_the_tables_starts_without_the_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tables set up before the index existed, by another user: the server's user may
    only read and write rows. It starts (a rollback then scans), as it did before."""
    require_postgres()
    role = new_database_name()
    try:
        async with temporary_database() as uri:
            async with AsyncPostgresSaver.from_conn_string(uri) as admin_saver:
                await admin_saver.setup()  # langgraph's tables, no run-id index
            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as admin:
                for statement in (
                    "CREATE ROLE {} LOGIN PASSWORD 'app'",
                    "GRANT USAGE ON SCHEMA public TO {}",
                    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {}",
                ):
                    await admin.execute(psql.SQL(statement).format(psql.Identifier(role)))
            app_uri = with_user(uri, role, "app")
            monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", app_uri)
            async with sessions_checkpointer() as saver:
                thread = await Seeder(app_uri, saver).chat(["one", "two"])
                await saver.adelete_for_runs([thread.last_run_id])
                assert (await thread.state()).values == thread.snapshots[thread.run_ids[0]].values
    finally:
        async with await psycopg.AsyncConnection.connect(admin_uri(), autocommit=True) as admin:
            await admin.execute(psql.SQL("DROP ROLE IF EXISTS {}").format(psql.Identifier(role)))
