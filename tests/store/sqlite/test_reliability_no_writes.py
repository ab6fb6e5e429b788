"""A GET never writes: thousands of mixed requests leave ``sessions.db``'s bytes and rows
exactly as they were, and a missing store is never created."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import httpx

from evoscientist_final_answer.http.openapi import OPENAPI_PATH
from tests.support.reliability import assert_error_shape, store_files, table_rows
from tests.support.seeds import answer_client, hex8_thread_id, open_seeder, route, uuid_thread_id

REQUESTS = 2_000
CONCURRENCY = 8


def mixed_requests(
    rng: random.Random, threads: dict[str, list[str]], etags: dict[str, str]
) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """(path, query, headers): known and unknown threads and runs, every parameter,
    conditional requests, malformed ones, and the other routes."""
    known = sorted(threads)
    requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
    for _ in range(REQUESTS):
        roll = rng.random()
        thread_id = rng.choice(known)
        params: dict[str, Any] = {}
        headers: dict[str, str] = {}
        if roll < 0.05:
            requests.append((OPENAPI_PATH, {}, {}))  # the route's other route
            continue
        if roll < 0.08:
            requests.append(("/api/openapi.json", {}, {}))
            continue
        if roll < 0.18:
            thread_id = rng.choice([uuid_thread_id(), hex8_thread_id(), "no such thread"])
        elif roll < 0.25:
            params["wait"] = rng.choice(["x", "-1", "61", "nan"])
        elif roll < 0.30:
            params["format"] = rng.choice(["xml", "TEXT", ""])
        if rng.random() < 0.3 and threads.get(thread_id):
            params["run_id"] = rng.choice([*threads[thread_id], uuid_thread_id()])
        if rng.random() < 0.2:
            params["format"] = "text"
        if rng.random() < 0.2:
            params["include_reasoning"] = rng.choice(["true", "1", "false"])
        if rng.random() < 0.05:
            params["wait"] = "0.01"
        if rng.random() < 0.2 and thread_id in etags:
            headers["If-None-Match"] = rng.choice([etags[thread_id], '"stale"', "*"])
        requests.append((route(thread_id), params, headers))
    return requests


async def send_all(
    client: httpx.AsyncClient, requests: list[tuple[str, dict[str, Any], dict[str, str]]]
) -> dict[int, int]:
    statuses: dict[int, int] = {}
    queue = list(reversed(requests))

    async def worker() -> None:
        while queue:
            path, params, headers = queue.pop()
            response = await client.get(path, params=params, headers=headers)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code in (200, 304, 404, 422, 503), response.text
            if response.status_code >= 400:
                assert_error_shape(response)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return statuses


async def test_thousands_of_requests_leave_bytes_and_rows_alone(tmp_path: Path) -> None:
    db_path = tmp_path / "sessions.db"
    async with open_seeder(db_path) as seeder:
        threads = await seeder.every_scenario()
        runs = {t.thread_id: list(t.run_ids) for t in threads}
    # The writer is closed: every byte is in the file itself (no WAL to hide changes in).
    files_before, rows_before = store_files(db_path), table_rows(db_path)
    assert files_before[db_path.name] is not None

    async with answer_client(db_path) as client:
        etags = {}
        for thread_id in runs:
            response = await client.get(route(thread_id))
            assert response.status_code == 200
            etags[thread_id] = response.headers["etag"]
        requests = mixed_requests(random.Random(20261130), runs, etags)
        started = time.monotonic()
        statuses = await send_all(client, requests)
        elapsed = time.monotonic() - started

    print(f"{len(requests)} requests in {elapsed:.2f}s: {statuses}")
    assert sum(statuses.values()) == REQUESTS
    assert {200, 304, 404, 422} <= set(statuses), statuses
    assert 503 not in statuses, statuses
    assert table_rows(db_path) == rows_before
    files_after = store_files(db_path)
    assert files_after[db_path.name] == files_before[db_path.name]
    assert files_after[f"{db_path.name}-journal"] is None
    # SQLite's read-only open of a WAL database creates the (empty) WAL and its index
    # when they are missing: nothing is written into them, and the writer removes them.
    wal = db_path.with_name(f"{db_path.name}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert {p.name for p in tmp_path.iterdir()} <= {
        "sessions.db",
        "sessions.db-wal",
        "sessions.db-shm",
    }


async def test_requests_beside_a_live_writer_leave_its_files_alone(tmp_path: Path) -> None:
    """The usual case: the writer (langgraph dev, the TUI) keeps the store open in WAL
    mode and its latest data sits in the WAL; reading must not checkpoint or touch it."""
    db_path = tmp_path / "sessions.db"
    async with open_seeder(db_path) as seeder:
        threads = await seeder.every_scenario()
        runs = {t.thread_id: list(t.run_ids) for t in threads}
        files_before = store_files(db_path)
        assert files_before[f"{db_path.name}-wal"] is not None
        rows_before = table_rows(db_path)
        async with answer_client(db_path) as client:
            requests = mixed_requests(random.Random(7), runs, {})[:500]
            await send_all(client, requests)
        assert store_files(db_path) == files_before
        assert table_rows(db_path) == rows_before


async def test_a_missing_store_is_never_created(tmp_path: Path) -> None:
    absent_dir = tmp_path / "never" / "made"
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    for db_path in (absent_dir / "sessions.db", empty_dir / "sessions.db"):
        async with answer_client(db_path) as client:
            requests = mixed_requests(random.Random(3), {uuid_thread_id(): []}, {})[:300]
            statuses = await send_all(client, requests)
        assert set(statuses) <= {200, 422, 503}, statuses  # 200: the non-store routes
        assert statuses.get(503, 0) > 100, statuses
    assert not (tmp_path / "never").exists()
    assert list(empty_dir.iterdir()) == []
