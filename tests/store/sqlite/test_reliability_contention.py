"""Another process writes ``sessions.db`` while the route reads it: answers stay 200, or
become a clear, retryable 503 after a bounded wait — never ``database is locked`` in a
body, never a request that outlives its deadline.

The other process is real (``python -c`` with ``sqlite3``): it holds a write
transaction, checkpoints the WAL, or writes in rollback-journal mode, and says ``ready``
once it holds what it holds.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from evoscientist_final_answer.http.service import READ_DEADLINE_SECONDS
from evoscientist_final_answer.store.sqlite.connection import BUSY_TIMEOUT_SECONDS
from tests.support.reliability import assert_error, problem_lines, writer
from tests.support.seeds import SeededThread, answer_client, expected_answer, open_seeder, route

HOLD_SECONDS = 2.0  # a checkpoint loop's length
HAMMER_SECONDS = 1.5  # of requests, while the other process holds its lock
# A request may take its reader's busy wait, once per statement that meets the lock,
# but never past the service's deadline (plus scheduling slack on a loaded machine).
SLACK_SECONDS = 1.5

# The other process. argv: db path, what to do, seconds (a spill's hold, a checkpoint
# loop's length). A lock, and a checkpoint kept waiting, last until the test releases
# them (a line on stdin, or its end): held for a fixed time, they ran out before the
# requests of a loaded machine did.
OTHER_PROCESS = r"""
import sqlite3, sys, threading, time
path, action, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
conn.execute("CREATE TABLE IF NOT EXISTS contention_probe (n INTEGER, pad TEXT)")
if action in ("immediate", "exclusive"):
    conn.execute(f"BEGIN {action.upper()}")
    conn.execute("INSERT INTO contention_probe VALUES (1, zeroblob(100000))")
    print("ready", flush=True)
    sys.stdin.readline()
    conn.execute("COMMIT")
elif action == "spill":
    # Rollback journal, a transaction big enough to spill pages into the file: the
    # process is killed inside it and leaves a hot journal behind.
    conn.execute("PRAGMA cache_size=1")
    conn.execute("BEGIN EXCLUSIVE")
    for n in range(3000):
        conn.execute("INSERT INTO contention_probe VALUES (?, zeroblob(500))", (n,))
    print("ready", flush=True)
    time.sleep(hold)
elif action == "checkpoint":
    # A reader pins the WAL so the TRUNCATE checkpoint stays in progress (it waits for
    # the reader, holding the checkpoint lock) until the release.
    for n in range(200):
        conn.execute("INSERT INTO contention_probe VALUES (?, zeroblob(2000))", (n,))
    pin = sqlite3.connect(path, isolation_level=None)
    pin.execute("BEGIN")
    pin.execute("SELECT count(*) FROM contention_probe").fetchone()
    conn.execute("PRAGMA busy_timeout = 600000")
    done = []
    def checkpoint():
        started = time.monotonic()
        result = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        done.append((result, round(time.monotonic() - started, 2)))
    checkpointing = threading.Thread(target=checkpoint)
    print("ready", flush=True)
    checkpointing.start()
    sys.stdin.readline()
    pin.execute("COMMIT")
    checkpointing.join()
    print("checkpointed", *done[0], flush=True)
elif action == "checkpoint-loop":
    # Checkpoint (TRUNCATE) again and again while appending: the WAL is reset under the
    # reader's feet many times a second.
    print("ready", flush=True)
    end = time.monotonic() + hold
    n = 0
    while time.monotonic() < end:
        conn.execute("INSERT INTO contention_probe VALUES (?, zeroblob(4000))", (n,))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        n += 1
    print("checkpoints", n, flush=True)
conn.close()
"""


@asynccontextmanager
async def other_process(
    db_path: Path, action: str, hold: float = HOLD_SECONDS
) -> AsyncIterator[Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        OTHER_PROCESS,
        str(db_path),
        action,
        str(hold),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert line.strip() == b"ready", (line, await proc.stderr.read())  # type: ignore[union-attr]
        yield proc
    finally:
        if proc.returncode is None:
            release(proc)
            try:
                await asyncio.wait_for(proc.wait(), hold + 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()


def release(proc: Any) -> None:
    """Let the other process commit its lock, or its pinned reader (once is enough)."""
    assert proc.stdin is not None
    if not proc.stdin.is_closing():
        proc.stdin.write(b"release\n")
        proc.stdin.close()


async def seeded_store(db_path: Path, journal_mode: str = "wal") -> tuple[SeededThread, str]:
    async with open_seeder(db_path) as seeder:
        thread = await seeder.agent(("What does contention do to a reader?",))
        expected = expected_answer(await thread.state())
    if journal_mode != "wal":
        with writer(db_path) as conn:
            (mode,) = conn.execute(f"PRAGMA journal_mode={journal_mode}").fetchone()
        assert mode == journal_mode
    return thread, expected


async def hammer(
    client: httpx.AsyncClient, thread_id: str, seconds: float, **params: Any
) -> list[tuple[float, httpx.Response]]:
    """Requests, four at a time, for ``seconds``: (latency, response) of each."""
    results: list[tuple[float, httpx.Response]] = []
    end = time.monotonic() + seconds

    async def one() -> None:
        while time.monotonic() < end:
            started = time.monotonic()
            response = await client.get(route(thread_id), params=params)
            results.append((time.monotonic() - started, response))
            # A cached answer never suspends and the in-process transport does no I/O: a
            # client looping on it would hold the GIL and starve aiosqlite's thread, and
            # the reads of the rest would stall on that instead of on the writer. A real
            # client waits on its socket here.
            await asyncio.sleep(0.001)

    await asyncio.gather(*(one() for _ in range(4)))
    return results


def check_outcomes(
    results: list[tuple[float, httpx.Response]], expected: str, *, allow_503: bool
) -> dict[str, Any]:
    """Every answer is right, or the documented retryable 503; none outlived the deadline."""
    assert results
    statuses: dict[int, int] = {}
    for latency, response in results:
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        if response.status_code == 200:
            assert response.json()["content"] == expected
        else:
            assert allow_503, response.text
            assert_error(response, 503, "store_unavailable", retryable=True)
        assert latency < READ_DEADLINE_SECONDS + SLACK_SECONDS, latency
    outcome = {
        "requests": len(results),
        "statuses": statuses,
        "max_latency": round(max(latency for latency, _ in results), 3),
    }
    print("contention outcome:", outcome)  # measured numbers for docs/reliability.md (-s)
    return outcome


# ------------------------------------------------------------------ WAL (the default)


@pytest.mark.parametrize("lock", ["immediate", "exclusive"])
async def test_writer_holding_a_write_transaction(db_path: Path, lock: str) -> None:
    """In WAL mode a writer's lock, even ``BEGIN EXCLUSIVE``, never blocks a reader."""
    thread, expected = await seeded_store(db_path)
    async with answer_client(db_path) as client, other_process(db_path, lock) as proc:
        results = await hammer(client, thread.thread_id, HAMMER_SECONDS)
        assert proc.returncode is None  # still holding the lock when the requests ended
    # No 503: a read that met the lock would wait out its busy timeout and, the lock held
    # through every request, fail. Not a latency bound: under load a read can take longer
    # than that timeout without meeting any lock.
    check_outcomes(results, expected, allow_503=False)


async def test_wal_checkpoint_truncate_in_progress(db_path: Path) -> None:
    thread, expected = await seeded_store(db_path)
    async with answer_client(db_path) as client:
        async with other_process(db_path, "checkpoint") as proc:
            results = await hammer(client, thread.thread_id, HAMMER_SECONDS)
            assert proc.returncode is None
            release(proc)
            assert proc.stdout is not None
            report = (await proc.stdout.read()).decode()
        assert "checkpointed" in report, report
        print("checkpoint:", report.strip())
        # After the checkpoint reset the WAL, the same connection reads the file afresh.
        after = await client.get(route(thread.thread_id))
    check_outcomes(results, expected, allow_503=False)
    assert after.status_code == 200 and after.json()["content"] == expected


async def test_wal_reset_again_and_again_while_reading(db_path: Path) -> None:
    thread, expected = await seeded_store(db_path)
    async with answer_client(db_path) as client, other_process(db_path, "checkpoint-loop"):
        results = await hammer(client, thread.thread_id, HAMMER_SECONDS)
    outcome = check_outcomes(results, expected, allow_503=True)
    # A reader may wait on the checkpointer for a moment, but mostly just answers.
    assert outcome["statuses"].get(200, 0) >= outcome["requests"] * 0.9, outcome


# ------------------------------------------------------------------ rollback journal


async def test_rollback_journal_writer_with_reserved_lock(db_path: Path) -> None:
    """``journal_mode=DELETE``: a writer's RESERVED lock (``BEGIN IMMEDIATE``) still
    lets readers in; only its commit takes the file for a moment."""
    thread, expected = await seeded_store(db_path, "delete")
    async with answer_client(db_path) as client, other_process(db_path, "immediate"):
        results = await hammer(client, thread.thread_id, HAMMER_SECONDS)
    check_outcomes(results, expected, allow_503=False)


async def test_rollback_journal_writer_with_exclusive_lock(
    db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``BEGIN EXCLUSIVE`` in rollback-journal mode shuts readers out: each request waits
    out the busy timeout (behind the others on the one connection, up to the deadline),
    then gets a retryable 503; the answer is back after the commit."""
    thread, expected = await seeded_store(db_path, "delete")
    async with answer_client(db_path) as client:
        async with other_process(db_path, "exclusive") as proc:
            results = await hammer(client, thread.thread_id, 1.0)
            started = time.monotonic()
            waited = await client.get(route(thread.thread_id), params={"wait": "30"})
            waited_for = time.monotonic() - started
            assert proc.returncode is None  # the lock was held throughout
            proc.kill()
        after = await client.get(route(thread.thread_id))
    outcome = check_outcomes(results, expected, allow_503=True)
    assert outcome["statuses"] == {503: outcome["requests"]}, outcome
    # A long-poll is bounded by the busy wait, not by ``wait=30``.
    assert_error(waited, 503, "store_unavailable", retryable=True)
    assert BUSY_TIMEOUT_SECONDS * 0.8 < waited_for < BUSY_TIMEOUT_SECONDS + SLACK_SECONDS
    assert after.status_code == 200 and after.json()["content"] == expected
    lines = problem_lines(caplog)
    assert len(lines) == outcome["requests"] + 1, lines  # one line per failed request
    assert all(thread.thread_id in line and "locked" in line for line in lines), lines


async def test_deadline_ends_a_read_stuck_on_the_store(db_path: Path) -> None:
    """The service's own deadline, shorter than the reader's busy wait: the request
    ends at the deadline with a retryable 503."""
    thread, _ = await seeded_store(db_path, "delete")
    async with answer_client(db_path, read_deadline=0.3) as client:
        async with other_process(db_path, "exclusive") as proc:
            started = time.monotonic()
            response = await client.get(route(thread.thread_id))
            elapsed = time.monotonic() - started
            assert proc.returncode is None
            proc.kill()
        assert_error(response, 503, "store_unavailable", retryable=True)
        assert 0.25 < elapsed < 0.3 + SLACK_SECONDS, elapsed
        # The statement the deadline abandoned does not wedge the connection.
        assert (await client.get(route(thread.thread_id))).status_code == 200


async def test_writer_killed_inside_a_transaction_leaves_a_hot_journal(db_path: Path) -> None:
    """kill -9 of a rollback-journal writer mid-transaction: the file needs a rollback that
    only a writer may do. The route never does it (it never writes): a retryable 503
    until a writer opens the store, then the answer as it was before the transaction."""
    thread, expected = await seeded_store(db_path, "delete")
    journal = db_path.with_name(f"{db_path.name}-journal")
    async with other_process(db_path, "spill", hold=60) as proc:
        proc.kill()
        await proc.wait()
    assert journal.exists() and journal.stat().st_size > 0
    journal_bytes, file_bytes = journal.read_bytes(), db_path.read_bytes()
    async with answer_client(db_path) as client:
        for _ in range(3):
            response = await client.get(route(thread.thread_id))
            assert_error(response, 503, "store_unavailable", retryable=True)
        assert journal.read_bytes() == journal_bytes and db_path.read_bytes() == file_bytes
        with closing(sqlite3.connect(db_path)) as conn:  # the next writer rolls it back
            conn.execute("SELECT count(*) FROM checkpoints").fetchone()
        assert not journal.exists() or journal.stat().st_size == 0
        response = await client.get(route(thread.thread_id))
    assert response.status_code == 200, response.text
    assert response.json()["content"] == expected
