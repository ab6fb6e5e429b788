"""What the PostgreSQL lazy decode keeps between reads (decoded DeltaChannel snapshots)
never outlives the rows it came from; what it reads is only what answers.

The lazy answer itself is held against the saver's full decode on every checkpoint of
real threads by ``tests/store/test_lazy_decoding.py`` (both backends)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from evoscientist_final_answer.store import value_end
from evoscientist_final_answer.store.errors import StoreUnavailable, ThreadNotFound
from evoscientist_final_answer.store.postgres import history as postgres_history
from evoscientist_final_answer.store.postgres import parts as postgres_parts
from evoscientist_final_answer.store.postgres.reader import HEAD_SQL, PostgresAnswerReader
from tests.support.seeds import DELTA_PREAMBLE, MessagesMode, Seeder, Store

pytestmark = pytest.mark.backends("postgres")


async def test_a_replaced_thread_is_not_read_from_a_kept_snapshot(
    store: Store, seeder: Seeder
) -> None:
    """The store replaced under a running reader (the thread's rows deleted, the same
    thread id written again with other messages): the snapshot kept from the old rows
    answers nothing."""
    # Updates ahead of the turns: each turn's last checkpoint falls between snapshots.
    shift = DELTA_PREAMBLE
    first = await seeder.chat(["old answer 1", "old answer 2"], mode="delta", preamble=shift)
    reader = store.reader()
    assert isinstance(reader, PostgresAnswerReader)
    try:
        assert (await reader.read(first.thread_id)).content == "old answer 2"
        assert reader._history.seeds, "the DeltaChannel's snapshot is kept decoded"
        await seeder.saver.adelete_thread(first.thread_id)
        await seeder.chat(
            ["new answer 1", "new answer 2", "new answer 3"],
            mode="delta",
            thread_id=first.thread_id,
            preamble=shift,
        )
        assert (await reader.read(first.thread_id)).content == "new answer 3"
    finally:
        await reader.close()


async def test_a_chain_gone_between_the_two_statements_is_unavailable(
    store: Store, seeder: Seeder
) -> None:
    """The DeltaChannel's history is read by a second statement: a thread deleted in
    between shows as an empty chain, a retryable failure, not an empty answer."""
    thread = await seeder.chat(["answer"], mode="delta")
    reader = store.reader()
    assert isinstance(reader, PostgresAnswerReader)
    try:
        await reader.read(thread.thread_id)
        await seeder.saver.adelete_thread(thread.thread_id)
        async with reader._db.session() as conn:
            with pytest.raises(StoreUnavailable, match="vanished"):
                await reader._history.walk(conn, thread.thread_id, "gone-checkpoint")
    finally:
        await reader.close()


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


async def test_a_new_connection_comes_with_the_decode_prepared(
    store: Store, seeder: Seeder
) -> None:
    """Each pooled connection prepares the statements of a first read as it opens (for
    no thread), so a restarted server's first read of each thread plans none of them;
    a database with no tables yet fails them harmlessly (``test_postgres_reader``)."""
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


def rows_read(plan: dict[str, Any], tables: set[str]) -> dict[str, int]:
    """Rows each of ``tables`` gave an ``EXPLAIN (ANALYZE, FORMAT JSON)`` plan, over
    all loops of every node that scanned it, those its filters dropped included."""
    found: dict[str, int] = {}
    if plan.get("Relation Name") in tables:
        rows = plan["Actual Rows"] + plan.get("Rows Removed by Filter", 0)
        found[plan["Relation Name"]] = rows * plan["Actual Loops"]
    for child in plan.get("Plans", []):
        for table, rows in rows_read(child, tables).items():
            found[table] = found.get(table, 0) + rows
    return found


@pytest.mark.parametrize("mode", ["add_messages", "delta"])
async def test_a_first_read_reads_a_few_rows_however_long_the_thread(
    store: Store, seeder: Seeder, mode: MessagesMode
) -> None:
    """The first read's statement (head, checkpoint row, status blobs, and for a value
    left on the server its step's writes and its parent's value) reads each row by its
    primary key: a handful of rows, not the thread's. Joined in, one lookup of the
    parent's value read every checkpoint and blob of the thread per checkpoint."""
    replies = [f"answer {i}" for i in range(8)]
    thread = await seeder.chat(replies, mode=mode, preamble=DELTA_PREAMBLE)
    reader = store.reader()
    assert isinstance(reader, PostgresAnswerReader)
    params = {"thread_id": thread.thread_id, "agent_name": reader.agent_name}
    statement = "EXPLAIN (ANALYZE, FORMAT JSON) " + postgres_parts.with_checkpoint_row(HEAD_SQL)
    try:
        async with reader._db.session() as conn:
            cur = await conn.execute(
                "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s", (thread.thread_id,)
            )
            assert (await cur.fetchone())["n"] > 20  # a thread long enough to tell
            for whole_max in (0, postgres_parts.WHOLE_VALUE_BYTES):
                cur = await conn.execute(statement, {**params, "whole_max": whole_max})
                plan = (await cur.fetchone())["QUERY PLAN"][0]["Plan"]
                read = rows_read(plan, {"checkpoints", "checkpoint_blobs"})
                assert read and all(rows <= 6 for rows in read.values()), read
    finally:
        await reader.close()
