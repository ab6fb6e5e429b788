"""The PostgreSQL parts fetch (``store/postgres/parts.py``) reads only what answers: a
new connection comes with its statements prepared, and a large value is answered from
its end, read whole only when that proves nothing.

The lazy answer itself is held against the saver's full decode on every checkpoint of
real threads by ``tests/store/test_lazy_decoding.py`` (both backends)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from evoscientist_final_answer.store import value_end
from evoscientist_final_answer.store.postgres import history as postgres_history
from evoscientist_final_answer.store.postgres import parts as postgres_parts
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from tests.support.seeds import Seeder, Store

pytestmark = pytest.mark.backends("postgres")


async def test_a_new_connection_comes_with_the_decode_prepared(
    store: Store, seeder: Seeder
) -> None:
    """Each pooled connection prepares the statements of a first read as it opens (for
    no thread), so a restarted server's first read of each thread plans none of them;
    a database with no tables yet fails them harmlessly (``test_reader``)."""
    await seeder.chat(["answer"], mode="delta")
    reader = store.reader()
    assert isinstance(reader, PostgresAnswerReader)
    try:
        pool = await reader._open()
        await pool.wait()
        async with reader._db.session() as conn:
            cur = await conn.execute("SELECT statement FROM pg_prepared_statements")
            prepared = "\n".join(row["statement"] for row in await cur.fetchall())
    finally:
        await reader.close()
    for sql in (
        postgres_history.HISTORY_SQL,
        postgres_history.SEED_CHECK_SQL,
        postgres_history.SEED_SQL,
        postgres_parts.CHECKPOINT_SQL,
    ):
        assert sql.split("%(")[0].strip()[:60] in prepared
    assert "WITH h AS" in prepared  # the head a first read runs, with its checkpoint row


async def test_a_large_value_is_answered_from_its_end(
    store: Store, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain thread past ``WHOLE_VALUE_BYTES``: its value stays on the server, the
    step that made it proves its newest entries (``value_end``), and the answer is the
    full decode's. Read again with that proof failing, it is read whole."""
    preamble = [
        HumanMessage("notes " * 4_000, id="notes"),  # ~24 KB a message
        *(AIMessage("more " * 5_000, id=f"more-{i}") for i in range(3)),
    ]
    thread = await seeder.chat(["the answer"], preamble=preamble)
    whole_reads: list[str] = []
    read_whole = postgres_parts._whole_value

    async def counted(conn: Any, thread_id: str, checkpoint: Any) -> Any:
        whole_reads.append(thread_id)
        return await read_whole(conn, thread_id, checkpoint)

    monkeypatch.setattr(postgres_parts, "_whole_value", counted)
    reader = store.reader()
    full = store.reader(lazy_decoding=False)
    try:
        answer = await reader.read(thread.thread_id)
        assert answer == await full.read(thread.thread_id)
        assert answer.content == "the answer"
        assert whole_reads == []
        monkeypatch.setattr(value_end, "newest_entries", lambda end, writes: None)
        reader.forget_answers()
        assert await reader.read(thread.thread_id) == answer
        assert whole_reads == [thread.thread_id]
    finally:
        await reader.close()
        await full.close()
