"""``PostgresAnswerReader`` and the ``EVOSCIENTIST_DATABASE_URI`` switch: what only the
PostgreSQL store has (read-only sessions, a server that is down, a database nothing wrote
to, migrations run by servers starting together, writes upserted in place).

What every direct reader must do is held on both backends by the tests marked
``backends("sqlite", "postgres")`` in ``tests/http/test_final_answer.py`` and
``tests/store/sqlite/test_reader.py``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import psycopg
import psycopg.errors
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import sql

from EvoScientist.checkpointer import sessions_checkpointer, setup_postgres
from evoscientist_final_answer import settings
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.errors import ThreadNotFound
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.bounds import HELD_WAIT_S, NOT_HELD_S
from tests.support.postgres import (
    admin_uri,
    database_exists,
    database_uri,
    new_database_name,
    require_postgres,
    table_names,
    temporary_database,
    with_user,
)
from tests.support.seeds import (
    AGENT_NAME,
    DELTA_PREAMBLE,
    Seeder,
    Store,
    answer_client,
    expected_answer,
    open_seeder,
    route,
    serving,
    uuid_thread_id,
)
from tests.support.servers import free_port

pytestmark = pytest.mark.backends("postgres")

SAVER_TABLES = ["checkpoint_blobs", "checkpoint_migrations", "checkpoint_writes", "checkpoints"]


async def test_reader_sessions_refuse_to_write(seeder: Seeder) -> None:
    """Even a bug in the reader could not write: its sessions are read-only."""
    thread = await seeder.chat(["hello"])
    reader = PostgresAnswerReader(seeder.store.uri, AGENT_NAME)
    try:
        assert (await reader.read(thread.thread_id)).content == "hello"
        assert reader._pool is not None
        async with reader._pool.connection() as conn:
            for statement in ("CREATE TABLE probe (x int)", "DELETE FROM checkpoints"):
                with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                    await conn.execute(statement)
    finally:
        await reader.close()
    # A reader left open would keep its pool's tasks, which swallow the loop's
    # cancellation at teardown (psycopg_pool catches CancelledError in a connect).
    after = Store.of(seeder.store).reader()
    try:
        assert (await after.read(thread.thread_id)).content == "hello"
    finally:
        await after.close()


async def test_unreachable_server_is_a_quick_503() -> None:
    uri = f"postgresql://postgres:secret@127.0.0.1:{free_port()}/evosci_nowhere"
    started = time.monotonic()
    async with answer_client(uri, timeout=0.5) as client:
        response = await client.get(route(uuid_thread_id()))
    assert time.monotonic() - started < 5
    assert response.status_code == 503, response.text
    assert response.json()["error"] == {
        "code": "store_unavailable",
        "message": response.json()["detail"],
        "retryable": True,
    }
    assert response.headers["retry-after"]
    assert "secret" not in response.text and "evosci_nowhere" not in response.text


async def test_missing_database_is_503_and_never_created() -> None:
    require_postgres()
    name = new_database_name()
    async with answer_client(database_uri(name), timeout=0.5) as client:
        for params in ({}, {"run_id": "r1"}, {"wait": "0.2"}):
            response = await client.get(route(uuid_thread_id()), params=params)
            assert response.status_code == 503, response.text
    assert not await database_exists(name)


async def test_a_database_nothing_wrote_to_has_no_threads() -> None:
    async with temporary_database() as uri:
        async with answer_client(uri) as client:
            response = await client.get(route(uuid_thread_id()))
            assert response.status_code == 404, response.text
            assert response.json()["error"]["code"] == "thread_not_found"
            waited = await client.get(route(uuid_thread_id()), params={"wait": "0.2"})
            assert waited.status_code == 404
        assert await table_names(uri) == []  # the route set nothing up


async def test_tables_appearing_later_are_read() -> None:
    """A server started before the first run: 404 first, then the answer."""
    async with temporary_database() as uri, answer_client(uri) as client:
        thread_id = uuid_thread_id()
        assert (await client.get(route(thread_id))).status_code == 404
        async with open_seeder(uri) as seeder:
            thread = await seeder.chat(["finally here"], thread_id=thread_id)
            response = await client.get(route(thread_id))
            assert response.status_code == 200
            assert response.json()["content"] == await thread.expected() == "finally here"


async def test_servers_starting_together_set_the_tables_up_once() -> None:
    async with temporary_database() as uri:
        await asyncio.gather(*(setup_postgres(uri) for _ in range(4)))
        assert await table_names(uri) == SAVER_TABLES
        async with await psycopg.AsyncConnection.connect(uri) as conn:
            cur = await conn.execute(
                "SELECT count(*), count(DISTINCT v) FROM checkpoint_migrations"
            )
            total, distinct = await cur.fetchone()
        assert total == distinct == len(AsyncPostgresSaver.MIGRATIONS)


async def test_an_up_to_date_schema_needs_no_right_to_create_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server whose user may only read and write rows starts once the tables exist."""
    role = new_database_name()
    try:
        async with temporary_database() as uri:
            await setup_postgres(uri)
            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as admin:
                for statement in (
                    "CREATE ROLE {} LOGIN PASSWORD 'app'",
                    "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
                    "GRANT USAGE ON SCHEMA public TO {}",
                    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {}",
                ):
                    await admin.execute(sql.SQL(statement).format(sql.Identifier(role)))
            app_uri = with_user(uri, role, "app")
            async with await psycopg.AsyncConnection.connect(app_uri, autocommit=True) as app:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    await app.execute("CREATE TABLE probe (x int)")

            monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", app_uri)
            async with sessions_checkpointer() as saver:
                thread = await Seeder(app_uri, saver).chat(["written by the app user"])
            assert (await read_once(app_uri, thread.thread_id)).content == "written by the app user"
    finally:
        async with await psycopg.AsyncConnection.connect(admin_uri(), autocommit=True) as admin:
            await admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


async def read_once(uri: str, thread_id: str):
    reader = PostgresAnswerReader(uri, AGENT_NAME)
    try:
        return await reader.read(thread_id)
    finally:
        await reader.close()


async def test_a_replaced_write_changes_the_head(seeder: Seeder) -> None:
    """``checkpoint_writes`` rows of the special channels are upserted in place (same
    key, same count): the head must still change, and the cache must not answer."""
    thread = await seeder.chat(["hello"])
    reader = PostgresAnswerReader(seeder.store.uri, AGENT_NAME)
    try:
        before = await reader.head(thread.thread_id, None)
        assert before is not None and before.writes[0] == 0
        assert (await reader.read(thread.thread_id)).status is RunStatus.SUCCESS
        config = (await thread.state()).config
        await seeder.saver.aput_writes(config, [("__error__", ValueError("first"))], "task")
        first = await reader.head(thread.thread_id, None)
        answer = await reader.read(thread.thread_id)
        assert answer.status is RunStatus.ERROR and "first" in answer.error["message"]

        await seeder.saver.aput_writes(config, [("__error__", ValueError("second"))], "task")
        second = await reader.head(thread.thread_id, None)
        assert first is not None and second is not None
        assert second.checkpoint_id == first.checkpoint_id == before.checkpoint_id
        assert second.writes[0] == first.writes[0] == 1  # replaced, not added
        assert second != first
        assert "second" in (await reader.read(thread.thread_id)).error["message"]
    finally:
        await reader.close()


async def test_wait_for_change_after_a_token(seeder: Seeder) -> None:
    thread = await seeder.chat(["one", "two", "three"], questions=["q1"])
    reader = PostgresAnswerReader(seeder.store.uri, AGENT_NAME)
    try:
        # A read by run id learns the thread's head too: the token a long-poll needs.
        await reader.read(thread.thread_id, thread.last_run_id)
        token = reader.change_token(thread.thread_id)
        assert reader.watch.seen(thread.thread_id) == await reader.head(thread.thread_id, None)
        started = time.monotonic()
        await reader.wait_for_change(thread.thread_id, token, 0.3)  # nothing changed
        assert time.monotonic() - started >= 0.3

        waiting = asyncio.create_task(reader.wait_for_change(thread.thread_id, token, 10))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        await seeder.run(thread, {"messages": [HumanMessage("q2")]})
        await asyncio.wait_for(waiting, 2)  # woken by the poll that sees the new head

        # A change the caller's own read already saw ends the wait at once.
        token = reader.change_token(thread.thread_id)
        await seeder.run(thread, {"messages": [HumanMessage("q3")]})
        await reader.read(thread.thread_id)
        started = time.monotonic()
        await reader.wait_for_change(thread.thread_id, token, HELD_WAIT_S)
        assert time.monotonic() - started < NOT_HELD_S
    finally:
        await reader.close()


# ------------------------------------------------------------------ the switch


def test_database_uri_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings.database_uri() is None  # unset: sessions.db
    monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", "  ")
    assert settings.database_uri() is None
    monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", "postgresql://u:pw@db.internal/evo")
    assert settings.database_uri() == "postgresql://u:pw@db.internal/evo"
    monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", "mysql://u:pw@db.internal/evo")
    with pytest.raises(ValueError, match="postgresql://") as excinfo:
        settings.database_uri()
    assert "pw" not in str(excinfo.value)


async def test_service_reads_what_the_factory_writes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(tmp_path))
    unset = FinalAnswerService.from_environment()
    assert isinstance(unset.direct, SqliteAnswerReader)
    await unset.close()
    monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", "postgresql://u@h/db")
    service = FinalAnswerService.from_environment()
    assert isinstance(service.direct, PostgresAnswerReader)
    assert service.direct.uri == "postgresql://u@h/db"
    await service.close()  # never opened: nothing to connect to
    assert list(tmp_path.iterdir()) == []


async def test_default_app_serves_the_database(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With ``EVOSCIENTIST_DATABASE_URI`` set, the factory ``langgraph.json`` names
    writes to PostgreSQL and ``create_app()`` reads it there; no ``sessions.db`` appears."""
    async with temporary_database() as uri:
        monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", uri)
        monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(tmp_path / "evo"))
        monkeypatch.delenv("EVOSCIENTIST_LANGGRAPH_URL", raising=False)
        monkeypatch.delenv("EVOSCIENTIST_AGENT_NAME", raising=False)
        async with sessions_checkpointer() as saver:
            assert isinstance(saver, AsyncPostgresSaver)
            seeder = Seeder(uri, saver)
            thread = await seeder.agent(("Deployed on PostgreSQL?",))
            expected = expected_answer(await thread.state())

            app = create_app()
            async with serving(app) as client:
                response = await client.get(route(thread.thread_id))
                assert response.status_code == 200, response.text
                assert response.json()["content"] == expected
                assert response.json()["source"] == "checkpointer"
                service = app.state.final_answer.current()
                assert isinstance(service.direct, PostgresAnswerReader)
                assert service.direct._pool is not None
            assert service.direct._pool is None  # closed by the app's lifespan
        assert not (tmp_path / "evo" / "sessions.db").exists()


async def test_a_first_read_takes_the_checkpoint_row_with_its_head(
    store: Store, seeder: Seeder
) -> None:
    """A thread's first read is one statement (head and checkpoint row); a repeat poll
    reads the head alone (no blob); forgetting the answers makes the next read a first
    read again."""
    thread = await seeder.chat(["answer 1", "answer 2"], mode="delta", preamble=DELTA_PREAMBLE)
    reader = store.reader()
    full = store.reader(lazy_decoding=False)
    assert isinstance(reader, PostgresAnswerReader)
    try:
        head = await reader.head(thread.thread_id, None)
        assert head is not None
        assert (thread.thread_id, head) in reader._prefetched
        answer = await reader.read(thread.thread_id)
        assert answer == await full.read(thread.thread_id)
        assert not reader._prefetched  # handed to the decode
        assert await reader.head(thread.thread_id, None) == head
        assert not reader._prefetched  # a repeat poll: the head alone
        reader.forget_answers()
        await reader.head(thread.thread_id, None)
        assert (thread.thread_id, head) in reader._prefetched
    finally:
        await reader.close()
        await full.close()


async def test_another_users_head_prefetches_nothing(store: Store, seeder: Seeder) -> None:
    """With ``user_id`` only that user's checkpoints answer: another user's read of the
    thread finds no head and no row, and stays a 404."""
    thread = await seeder.chat(["answer"])
    reader = store.reader()
    assert isinstance(reader, PostgresAnswerReader)
    try:
        assert await reader.head(thread.thread_id, None, user_id="someone-else") is None
        assert not reader._prefetched
        with pytest.raises(ThreadNotFound):
            await reader.read(thread.thread_id, user_id="someone-else")
        assert (await reader.read(thread.thread_id)).content == "answer"
    finally:
        await reader.close()
