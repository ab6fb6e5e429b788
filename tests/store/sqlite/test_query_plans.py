"""Every query the SQLite reader runs finds its rows by primary key — flat however many
threads and checkpoints the store holds — and the ones a repeat poll runs read no row
at all (a covering index: the checkpoint blob is never touched). The PostgreSQL twin:
``tests/store/postgres/test_query_plans.py``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from evoscientist_final_answer.store.sqlite import history, parts, reader
from tests.support.seeds import Seeder

QUERIES = {
    "HEAD_IDS_SQL": reader.HEAD_IDS_SQL,
    "CHECKPOINT_SQL": parts.CHECKPOINT_SQL,
    "ANCESTORS_SQL": history.ANCESTORS_SQL,
    "ANCESTOR_IDS_SQL": history.ANCESTOR_IDS_SQL,
    "BLOBS_SQL": history.BLOBS_SQL.format(ids="?,?,?"),
    "MESSAGE_WRITES_SQL": history.MESSAGE_WRITES_SQL.format(task_path="task_path", ids="?,?,?"),
}
# What a poll of an unchanged thread runs.
REPEAT_POLL = ("HEAD_IDS_SQL",)


def plan(db: Path, sql: str) -> list[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("EXPLAIN QUERY PLAN " + sql, ["x"] * sql.count("?")).fetchall()
    conn.close()
    return [row[3] for row in rows]


@pytest.fixture
async def seeded(db_path: Path, seeder: Seeder) -> Path:
    await seeder.every_scenario()
    return db_path


@pytest.mark.parametrize("name", list(QUERIES))
async def test_rows_are_found_by_primary_key(seeded: Path, name: str) -> None:
    steps = plan(seeded, QUERIES[name])
    searches = [s for s in steps if s.startswith("SEARCH")]
    assert searches, steps
    for step in searches:
        assert "sqlite_autoindex_" in step and "thread_id=?" in step, (name, steps)
        assert "checkpoint_id" in step, (name, steps)
    # SCANs walk a subquery's or the recursive chain's own rows, never a table.
    scans = [s.split()[1] for s in steps if s.startswith("SCAN")]
    assert not set(scans) & {"checkpoints", "writes", "c"}, (name, steps)


@pytest.mark.parametrize("name", REPEAT_POLL)
async def test_a_repeat_poll_reads_only_the_index(seeded: Path, name: str) -> None:
    steps = plan(seeded, QUERIES[name])
    assert all("COVERING INDEX" in s for s in steps if s.startswith("SEARCH")), steps
