"""The store's change signal: wakes waiters on a commit, and vouches for quiet only
when it can be sure (the head cache skips its query on that word)."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from evoscientist_final_answer.store.sqlite.change_signal import (
    COALESCE_SECONDS,
    TRAILING_SECONDS,
    InotifySignal,
    PollingSignal,
    change_signal,
)
from tests.support.bounds import HELD_WAIT_S, NOT_HELD_S

SETTLE_SECONDS = COALESCE_SECONDS + TRAILING_SECONDS + 0.1

needs_inotify = pytest.mark.skipif(not InotifySignal.available(), reason="inotify is Linux's")


def make_store(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS t (n INTEGER)")
    conn.close()


def commit(path: Path, rows: int = 1) -> None:
    """A real commit from another connection, without yielding to the event loop."""
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(rows)])
    conn.close()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "sessions.db"
    make_store(path)
    return path


@pytest.fixture
async def settled(store: Path) -> AsyncIterator[InotifySignal]:
    """An inotify signal on ``store``, past the quiet-less window after its start."""
    if not InotifySignal.available():
        pytest.skip("inotify is Linux's")
    signal = change_signal(store)
    assert isinstance(signal, InotifySignal)
    await asyncio.sleep(SETTLE_SECONDS)
    try:
        yield signal
    finally:
        signal.close()


@pytest.fixture
def polling(store: Path) -> Iterator[PollingSignal]:
    signal = PollingSignal(store)
    try:
        yield signal
    finally:
        signal.close()


async def test_quiet_until_a_commit_even_before_the_loop_hears_of_it(
    store: Path, settled: InotifySignal
) -> None:
    token = settled.token()
    assert settled.quiet_since(token)
    commit(store)
    # No await in between: the loop has not read the event, the signal must.
    assert not settled.quiet_since(token)


async def test_not_quiet_within_the_trailing_window(store: Path, settled: InotifySignal) -> None:
    """A commit's WAL frames are written before the commit is visible: a head read
    right after the first report may predate it, so no token taken then is vouched for
    until the trailing report has passed."""
    before = settled.token()
    commit(store)
    started = time.monotonic()
    await settled.wait(before, HELD_WAIT_S)
    assert time.monotonic() - started < NOT_HELD_S  # woken by the commit
    during = settled.token()
    assert not settled.quiet_since(during)
    await asyncio.sleep(SETTLE_SECONDS)
    assert not settled.quiet_since(during)  # the trailing report moved the count
    after = settled.token()
    assert settled.quiet_since(after)


@needs_inotify
async def test_not_quiet_right_after_the_watch_begins(store: Path) -> None:
    """A commit written just before the watch began may become visible just after."""
    signal = change_signal(store)
    try:
        assert not signal.quiet_since(signal.token())
        await asyncio.sleep(SETTLE_SECONDS)
        assert signal.quiet_since(signal.token())
    finally:
        signal.close()


async def test_other_files_in_the_directory_keep_it_quiet(
    store: Path, settled: InotifySignal
) -> None:
    token = settled.token()
    (store.parent / "notes.txt").write_text("not the store")
    other = store.parent / "other.db"
    make_store(other)
    commit(other)
    assert settled.quiet_since(token)


async def test_a_store_replaced_by_rename_is_a_change(store: Path, settled: InotifySignal) -> None:
    staged = store.parent / "restore.tmp"
    make_store(staged)
    token = settled.token()
    staged.rename(store)
    assert not settled.quiet_since(token)


async def test_a_lost_watch_is_taken_again(store: Path, settled: InotifySignal) -> None:
    """The directory deleted and made again: the old watch hears nothing more, so the
    signal vouches for nothing until a new token has watched the new directory."""
    before = settled.token()
    shutil.rmtree(store.parent)
    assert not settled.quiet_since(before)
    await asyncio.sleep(SETTLE_SECONDS)
    assert not settled.quiet_since(settled.token())  # no directory to watch
    make_store(store)
    token = settled.token()
    assert not settled.quiet_since(token)  # watched again: a change, trailing included
    await asyncio.sleep(SETTLE_SECONDS)
    token = settled.token()
    assert settled.quiet_since(token)
    commit(store)
    assert not settled.quiet_since(token)


async def test_polling_never_vouches(polling: PollingSignal) -> None:
    """``stat`` cannot see two commits within one timestamp tick: never sure."""
    assert not polling.quiet_since(polling.token())


async def test_polling_wakes_a_waiter(store: Path, polling: PollingSignal) -> None:
    token = polling.token()
    waiter = asyncio.create_task(polling.wait(token, HELD_WAIT_S))
    await asyncio.sleep(0.05)
    commit(store, rows=1000)  # grows the WAL: size changes
    started = time.monotonic()
    await waiter
    assert time.monotonic() - started < NOT_HELD_S  # woken by the commit
    assert polling.token() != token


async def test_a_writer_that_never_pauses_is_still_reported(
    store: Path, settled: InotifySignal
) -> None:
    """Reports wait for a pause in the writes (a commit is visible only after them), but
    not forever: a busy writer's commits still wake waiters every few tens of ms."""
    writing = 0.4

    def busy_writer() -> None:
        end = time.monotonic() + writing
        with sqlite3.connect(store, isolation_level=None) as conn:
            while time.monotonic() < end:
                conn.execute("INSERT INTO t VALUES (1)")
                time.sleep(0.001)
        conn.close()

    start = settled.token()
    wakes = 0
    writer = asyncio.create_task(asyncio.to_thread(busy_writer))
    await asyncio.sleep(0.05)
    while not writer.done():
        token = settled.token()
        await settled.wait(token, 1.0)
        wakes += not writer.done() and settled.token() != token
    await writer
    assert settled.token() != start
    # Without the cap on coalescing there would be no report until the writer stops.
    assert wakes >= 4, wakes
