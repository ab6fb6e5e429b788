"""Every query the PostgreSQL reader runs on a first read finds its rows by primary key:
a handful of rows, however long the thread (the SQLite twin:
``tests/store/sqlite/test_query_plans.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from evoscientist_final_answer.store.postgres import parts as postgres_parts
from evoscientist_final_answer.store.postgres.reader import HEAD_SQL, PostgresAnswerReader
from tests.support.seeds import DELTA_PREAMBLE, MessagesMode, Seeder, Store

pytestmark = pytest.mark.backends("postgres")


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
