"""The reader's pool (``store/postgres/connection.py``): its sessions are read-only,
whatever options the URI brings; it pings a connection on checkout only when it has
been idle: one the server dropped while idle is replaced before a request uses it; one
dropped right after it answered fails one request retryably, and the next request gets
a fresh connection."""

from __future__ import annotations

import psycopg
import pytest

from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.postgres import connection as postgres_connection
from evoscientist_final_answer.store.postgres.connection import read_only_kwargs
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from tests.support.seeds import Seeder, Store

pytestmark = pytest.mark.backends("postgres")


def test_read_only_option_keeps_the_uri_options() -> None:
    plain = read_only_kwargs("postgresql://u@h/db")
    assert plain["options"] == "-c default_transaction_read_only=on"
    assert plain["autocommit"] is True
    own = read_only_kwargs("postgresql://u@h/db?options=-c%20search_path%3Dx")
    assert own["options"] == "-c search_path=x -c default_transaction_read_only=on"


async def drop_reader_connection(store: Store, reader: PostgresAnswerReader) -> None:
    """The server ends the reader's one pooled connection (a restart, a failover)."""
    async with reader._db.session() as conn:
        pid = conn.info.backend_pid
    async with await psycopg.AsyncConnection.connect(store.uri, autocommit=True) as admin:
        await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


async def test_a_connection_dropped_while_idle_is_replaced(
    store: Store, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_connection, "RECENTLY_USED_SECONDS", 0.0)
    thread = await seeder.chat(["answer"])
    reader = store.reader(min_size=1, max_size=1)
    assert isinstance(reader, PostgresAnswerReader)
    try:
        await reader.read(thread.thread_id)
        await drop_reader_connection(store, reader)
        reader.forget_answers()
        assert (await reader.read(thread.thread_id)).content == "answer"
    finally:
        await reader.close()


async def test_a_connection_dropped_right_after_use_fails_one_read(
    store: Store, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_connection, "RECENTLY_USED_SECONDS", 3600.0)
    thread = await seeder.chat(["answer"])
    reader = store.reader(min_size=1, max_size=1)
    assert isinstance(reader, PostgresAnswerReader)
    try:
        await reader.read(thread.thread_id)
        await drop_reader_connection(store, reader)
        with pytest.raises(StoreUnavailable):
            await reader.read(thread.thread_id)
        assert (await reader.read(thread.thread_id)).content == "answer"
    finally:
        await reader.close()
