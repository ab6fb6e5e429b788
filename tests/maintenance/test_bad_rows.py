"""A checkpoint row whose metadata is not JSON (written by hand, a crashed tool, disk
damage) is skipped and reported by the SQLite saver's maintenance: it never makes
another thread's rollback, copy or prune fail, and is never deleted by a prune.
(PostgreSQL keeps metadata as ``jsonb``: it cannot hold such a row.)"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from EvoScientist.checkpointer import sessions_checkpointer
from tests.support.seeds import SeededThread, Seeder, Store, uuid_thread_id

CORRUPT_SQL = """
UPDATE checkpoints SET metadata = CAST('{not json' AS BLOB)
WHERE thread_id = ? AND checkpoint_id = ?
"""
ROW_IDS_SQL = "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id"


@pytest.fixture
async def saver(
    store: Store, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BaseCheckpointSaver]:
    monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(store.path.parent))
    async with sessions_checkpointer() as saver:
        yield saver


def row_ids(seeder: Seeder, thread_id: str) -> list[str]:
    """The thread's checkpoint ids, read as SQL (langgraph's ``alist`` would raise)."""
    with sqlite3.connect(seeder.db_path) as conn:
        rows = conn.execute(ROW_IDS_SQL, (thread_id,)).fetchall()
    conn.close()
    return [r[0] for r in rows]


async def damaged(seeder: Seeder) -> tuple[SeededThread, str]:
    """A three-turn thread with one row in the middle of its history made unreadable."""
    thread = await seeder.chat(["one", "two", "three"])
    ids = row_ids(seeder, thread.thread_id)
    bad = ids[len(ids) // 2]
    with sqlite3.connect(seeder.db_path) as conn:
        conn.execute(CORRUPT_SQL, (thread.thread_id, bad))
    conn.close()
    return thread, bad


async def test_a_bad_row_elsewhere_does_not_stop_a_rollback_or_a_copy(
    seeder: Seeder, saver: BaseCheckpointSaver
) -> None:
    good = await seeder.chat(["first", "second"])
    other, _ = await damaged(seeder)

    await saver.adelete_for_runs([good.last_run_id])
    await saver.acopy_thread(other.thread_id, target := uuid_thread_id())

    assert (await good.state()).values == good.snapshots[good.run_ids[0]].values
    assert row_ids(seeder, target) == row_ids(seeder, other.thread_id)


async def test_prune_keeps_and_reports_the_row_it_cannot_read(
    seeder: Seeder, saver: BaseCheckpointSaver, caplog: pytest.LogCaptureFixture
) -> None:
    thread, bad = await damaged(seeder)
    head = row_ids(seeder, thread.thread_id)[-1]

    with caplog.at_level(logging.WARNING, logger="evoscientist_final_answer.maintenance"):
        await saver.aprune([thread.thread_id], strategy="keep_latest")

    assert row_ids(seeder, thread.thread_id) == sorted({head, bad})
    warning = next(r for r in caplog.records if bad in r.getMessage())
    assert warning.levelno == logging.WARNING
    assert thread.thread_id in warning.getMessage()
