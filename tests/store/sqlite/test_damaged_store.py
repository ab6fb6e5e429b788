"""A damaged ``sessions.db`` against a busy one: damage that will not heal is
``store_damaged`` (not retryable); contention that will is ``store_unavailable``
(retryable).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.support.seeds import answer_client, open_seeder, route


async def seeded_store(db_path: Path) -> list[str]:
    """A real store of several threads, its WAL folded into the file (writer closed)."""
    async with open_seeder(db_path) as seeder:
        threads = await seeder.every_scenario()
    with closing(sqlite3.connect(db_path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return [thread.thread_id for thread in threads]


@pytest.mark.parametrize("size", ["100 B", "4 KB", "half"])
async def test_a_truncated_store_is_damaged_not_retryable(db_path: Path, size: str) -> None:
    thread_ids = await seeded_store(db_path)
    full = db_path.stat().st_size
    keep = {"100 B": 100, "4 KB": 4096, "half": full // 2}[size]
    with db_path.open("r+b") as file:
        file.truncate(keep)
    codes = set()
    async with answer_client(db_path) as client:
        for thread_id in thread_ids:
            response = await client.get(route(thread_id))
            body = response.json()
            codes.add((response.status_code, body.get("error", {}).get("code")))
            if response.status_code == 503:
                assert body["error"]["retryable"] is False, body
                assert "Retry-After" not in response.headers
    # Every read of a store cut short meets the damage (a thread or two may still be
    # answered from pages before the cut; none is told to retry).
    assert (503, "store_damaged") in codes, codes
    assert codes <= {(503, "store_damaged"), (503, "checkpoint_unreadable"), (200, None)}


async def test_a_locked_store_stays_retryable(db_path: Path) -> None:
    """An exclusive lock held by another connection: busy, not damaged."""
    (thread_id, *_) = await seeded_store(db_path)
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("BEGIN EXCLUSIVE")
        try:
            async with answer_client(db_path, read_deadline=3.0) as client:
                response = await client.get(route(thread_id))
        finally:
            conn.execute("ROLLBACK")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "store_unavailable"
    assert response.json()["error"]["retryable"] is True
