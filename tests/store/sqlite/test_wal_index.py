"""The wal-index's commit mark (``store/sqlite/wal_index.py``) on real ``sessions.db``
files written by real graphs, and the polls it spares a trip to the file."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from evoscientist_final_answer.store.sqlite.change_signal import TRAILING_SECONDS
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from evoscientist_final_answer.store.sqlite.wal_index import WalIndex
from tests.support.seeds import AGENT_NAME, Seeder
from tests.support.trips import count_trips

pytestmark = pytest.mark.backends("sqlite")


async def test_each_commit_moves_the_mark_and_reads_do_not(db_path: Path, seeder: Seeder) -> None:
    thread = await seeder.agent(("q1",))
    index = WalIndex(db_path)
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        before = index.mark()
        assert before is not None
        await reader.read(thread.thread_id)
        assert index.mark() == before
        await seeder.run(thread, {"messages": [HumanMessage("q2")]})
        after = index.mark()
        assert after is not None and after != before
    finally:
        await reader.close()
        index.close()


def test_a_transaction_under_way_is_not_published(tmp_path: Path) -> None:
    """Frames written but not committed leave the mark as it was; the commit moves it;
    copying the WAL into the file publishes nothing new and leaves it too (a checkpoint
    that also empties the WAL rewrites the header: one query more, never one less)."""
    path = tmp_path / "wal.db"
    writer = sqlite3.connect(path)
    index = WalIndex(path)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("CREATE TABLE t (x)")
        writer.commit()
        committed = index.mark()
        assert committed is not None
        writer.execute("BEGIN")
        writer.execute("INSERT INTO t VALUES (zeroblob(100000))")  # spills into the WAL
        assert index.mark() == committed
        writer.commit()
        published = index.mark()
        assert published is not None and published != committed
        writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
        assert index.mark() == published
        writer.execute("INSERT INTO t VALUES (1)")  # restarts the WAL: new salts
        writer.commit()
        assert index.mark() not in (None, published)
    finally:
        writer.close()
        index.close()


def test_no_mark_where_the_index_cannot_vouch(tmp_path: Path) -> None:
    journal = tmp_path / "journal.db"
    with sqlite3.connect(journal) as conn:  # rollback-journal mode: no -shm at all
        conn.execute("CREATE TABLE t (x)")
    assert WalIndex(journal).mark() is None
    assert WalIndex(tmp_path / "missing.db").mark() is None
    truncated = tmp_path / "rebuilt.db"
    Path(f"{truncated}-shm").write_bytes(b"")  # SQLite truncates it to rebuild it
    assert WalIndex(truncated).mark() is None
    torn = tmp_path / "torn.db"
    Path(f"{torn}-shm").write_bytes(bytes(48) + b"\1" * 48)  # the two copies differ
    assert WalIndex(torn).mark() is None


async def test_a_file_renamed_over_the_index_or_the_database_is_not_vouched_for(
    db_path: Path, seeder: Seeder, tmp_path: Path
) -> None:
    await seeder.agent(("q1",))
    index = WalIndex(db_path)
    try:
        first = index.mark()
        assert first is not None
        copy = tmp_path / "copy-shm"
        copy.write_bytes(Path(f"{db_path}-shm").read_bytes())
        copy.replace(f"{db_path}-shm")  # same bytes, another file
        second = index.mark()
        assert second != first
        restored = tmp_path / "restored.db"
        restored.write_bytes(db_path.read_bytes())
        restored.replace(db_path)  # a backup renamed over the database, index untouched
        assert index.mark() not in (first, second)
        db_path.unlink()
        assert index.mark() is None
    finally:
        index.close()


async def test_a_poll_in_the_wake_of_a_commit_already_read_makes_no_trip(
    db_path: Path, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a commit the change signal cannot vouch (its trailing report is
    pending), and the head was asked again on aiosqlite's thread; the mark, unchanged
    since the read, now vouches instead. A later commit is still read at once."""
    thread = await seeder.agent(("q1",))
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        await reader.read(thread.thread_id)
        await seeder.run(thread, {"messages": [HumanMessage("q2")]})
        read = await reader.read(thread.thread_id)
        trips = count_trips(reader, monkeypatch)
        known = reader._heads.get((thread.thread_id, None, None))
        assert known is not None and not known.signal.quiet_since(known.token)
        assert await reader.read(thread.thread_id) == read
        await asyncio.sleep(TRAILING_SECONDS * 2)  # past the signal's last report
        assert not known.signal.quiet_since(known.token)
        assert await reader.read(thread.thread_id) == read
        assert trips == []
        await seeder.run(thread, {"messages": [HumanMessage("q3")]})
        newer = await reader.read(thread.thread_id)
        assert trips  # the mark moved: the head is asked again
        monkeypatch.undo()
    finally:
        await reader.close()
    assert newer.checkpoint_id != read.checkpoint_id
    assert newer.complete and newer.content == await thread.expected()


async def test_a_head_read_before_its_commit_was_published_is_read_again(
    db_path: Path, seeder: Seeder
) -> None:
    """A commit's frames reach the WAL, and raise the change signal's file events,
    before its wal-index header publishes them, which raises none. A writer held up
    between the two past the signal's trailing report (a loaded machine, an ``fsync``)
    left a head read in between cached under a quiet signal: a finished run's final
    checkpoint went unseen until the next write. Here the read in between is the head
    read before the commit, kept under the token of the signal's last report after it;
    the commit itself is real. The mark has moved, so the head is read again."""
    thread = await seeder.agent(("q1",))
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        before = await reader.read(thread.thread_id)
        key = (thread.thread_id, None, None)
        stale = reader._heads.get(key)
        assert stale is not None and stale.mark is not None
        await seeder.run(thread, {"messages": [HumanMessage("q2")]})
        await asyncio.sleep(TRAILING_SECONDS * 2)  # past the signal's last report
        token = stale.signal.token()
        assert stale.signal.quiet_since(token)  # the signal vouches for the stale read
        reader._heads.put(key, replace(stale, token=token))
        after = await reader.read(thread.thread_id)
    finally:
        await reader.close()
    assert after.checkpoint_id != before.checkpoint_id
    assert after.complete and after.content == await thread.expected()
