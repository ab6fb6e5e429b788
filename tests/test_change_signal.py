"""The store's change signal: wakes waiters on a commit, and vouches for quiet only
when it can be sure (the head cache skips its query on that word)."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from EvoScientist.store.change_signal import (
    COALESCE_SECONDS,
    TRAILING_SECONDS,
    InotifySignal,
    PollingSignal,
    change_signal,
)

SETTLE_SECONDS = COALESCE_SECONDS + TRAILING_SECONDS + 0.1

pytestmark = pytest.mark.skipif(not InotifySignal.available(), reason="inotify is Linux's")


def make_store(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS t (n INTEGER)")
    conn.close()


def commit(path: Path) -> None:
    """A real commit from another connection, without yielding to the event loop."""
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO t VALUES (1)")
    conn.close()


async def settled(path: Path) -> InotifySignal:
    signal = change_signal(path)
    assert isinstance(signal, InotifySignal)
    await asyncio.sleep(SETTLE_SECONDS)
    return signal


async def test_quiet_until_a_commit_even_before_the_loop_hears_of_it(tmp_path: Path) -> None:
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    signal = await settled(path)
    try:
        token = signal.token()
        assert signal.quiet_since(token)
        commit(path)
        # No await in between: the loop has not read the event, the signal must.
        assert not signal.quiet_since(token)
    finally:
        signal.close()


async def test_not_quiet_within_the_trailing_window(tmp_path: Path) -> None:
    """A commit's WAL frames are written before the commit is visible: a head read
    right after the first report may predate it, so no token taken then is vouched for
    until the trailing report has passed."""
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    signal = await settled(path)
    try:
        before = signal.token()
        commit(path)
        started = time.monotonic()
        await signal.wait(before, 1.0)
        assert time.monotonic() - started < 0.5
        during = signal.token()
        assert not signal.quiet_since(during)
        await asyncio.sleep(SETTLE_SECONDS)
        assert not signal.quiet_since(during)  # the trailing report moved the count
        after = signal.token()
        assert signal.quiet_since(after)
    finally:
        signal.close()


async def test_not_quiet_right_after_the_watch_begins(tmp_path: Path) -> None:
    """A commit written just before the watch began may become visible just after."""
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    signal = change_signal(path)
    try:
        assert not signal.quiet_since(signal.token())
        await asyncio.sleep(SETTLE_SECONDS)
        assert signal.quiet_since(signal.token())
    finally:
        signal.close()


async def test_other_files_in_the_directory_keep_it_quiet(tmp_path: Path) -> None:
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    signal = await settled(path)
    try:
        token = signal.token()
        (path.parent / "notes.txt").write_text("not the store")
        other = path.parent / "other.db"
        make_store(other)
        commit(other)
        assert signal.quiet_since(token)
    finally:
        signal.close()


async def test_a_store_replaced_by_rename_is_a_change(tmp_path: Path) -> None:
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    staged = tmp_path / "data" / "restore.tmp"
    make_store(staged)
    signal = await settled(path)
    try:
        token = signal.token()
        staged.rename(path)
        assert not signal.quiet_since(token)
    finally:
        signal.close()


async def test_a_lost_watch_is_taken_again(tmp_path: Path) -> None:
    """The directory deleted and made again: the old watch hears nothing more, so the
    signal vouches for nothing until a new token has watched the new directory."""
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    signal = await settled(path)
    try:
        before = signal.token()
        shutil.rmtree(path.parent)
        assert not signal.quiet_since(before)
        await asyncio.sleep(SETTLE_SECONDS)
        assert not signal.quiet_since(signal.token())  # no directory to watch
        make_store(path)
        token = signal.token()
        assert not signal.quiet_since(token)  # watched again: a change, trailing included
        await asyncio.sleep(SETTLE_SECONDS)
        token = signal.token()
        assert signal.quiet_since(token)
        commit(path)
        assert not signal.quiet_since(token)
    finally:
        signal.close()


async def test_polling_never_vouches(tmp_path: Path) -> None:
    """``stat`` cannot see two commits within one timestamp tick: never sure."""
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    signal = PollingSignal(path)
    try:
        token = signal.token()
        assert not signal.quiet_since(token)
    finally:
        signal.close()


async def test_polling_wakes_a_waiter(tmp_path: Path) -> None:
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    signal = PollingSignal(path)
    try:
        token = signal.token()
        waiter = asyncio.create_task(signal.wait(token, 5.0))
        await asyncio.sleep(0.05)
        with sqlite3.connect(path) as conn:  # grows the WAL: size changes
            conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(1000)])
        conn.close()
        started = time.monotonic()
        await waiter
        assert time.monotonic() - started < 1.0
        assert signal.token() != token
    finally:
        signal.close()


async def test_a_writer_that_never_pauses_is_still_reported(tmp_path: Path) -> None:
    """Reports wait for a pause in the writes (a commit is visible only after them), but
    not forever: a busy writer's commits still wake waiters every few tens of ms."""
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    signal = await settled(path)
    writing = 0.4

    def busy_writer() -> None:
        end = time.monotonic() + writing
        with sqlite3.connect(path, isolation_level=None) as conn:
            while time.monotonic() < end:
                conn.execute("INSERT INTO t VALUES (1)")
                time.sleep(0.001)
        conn.close()

    try:
        start = signal.token()
        wakes = 0
        writer = asyncio.create_task(asyncio.to_thread(busy_writer))
        await asyncio.sleep(0.05)
        while not writer.done():
            token = signal.token()
            await signal.wait(token, 1.0)
            wakes += not writer.done() and signal.token() != token
        await writer
        assert signal.token() != start
        # Without the cap on coalescing there would be no report until the writer stops.
        assert wakes >= 4, wakes
    finally:
        signal.close()
