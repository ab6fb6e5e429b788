"""The benchmark scenarios, measured side by side in one run. Sizes are message counts of
one research thread; every ratio comes from medians taken in the same interleaved
rounds, so machine noise hits both sides alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite
import httpx

from bench import postgres as bench_postgres
from bench import seed
from bench.asgi import route
from bench.crowd import CrowdReport, crowd
from bench.in_process import InProcess
from bench.timing import interleaved, ms, percentile
from evoscientist_final_answer.http.openapi import OPENAPI_PATH
from evoscientist_final_answer.store import lazy
from evoscientist_final_answer.store.sqlite.connection import READER_PRAGMAS, read_only_uri
from tests.support.servers import free_port, langgraph_dev, stop

REPO = Path(__file__).resolve().parents[1]
FLOOR_SQL = (
    "SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
    "ORDER BY checkpoint_id DESC LIMIT 1"
)


@dataclass
class Report:
    sizes: dict[tuple[str, int], dict[str, float]] = field(default_factory=dict)
    response_bytes: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    flat: dict[str, dict[str, float]] = field(default_factory=dict)
    long_poll: dict[str, float] = field(default_factory=dict)
    load: dict[str, Any] = field(default_factory=dict)
    crowd: CrowdReport | None = None
    round_two: Any = None  # bench.round_two.RoundTwo, when that part ran
    first_poll: Any = None  # bench.first_poll.FirstPoll, when that part ran
    rollback: Any = None  # bench.rollback.RollbackReport, when that part ran
    seconds: float = 0.0


class Floor:
    """SELECT of the newest checkpoint blob plus a msgpack parse that builds no objects."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.conn: aiosqlite.Connection | None = None

    async def __call__(self, thread_id: str) -> Any:
        if self.conn is None:
            self.conn = await aiosqlite.connect(read_only_uri(self.db), uri=True)
            for pragma in READER_PRAGMAS:  # the floor gets the reader's tuning too
                await self.conn.execute(pragma)
        async with self.conn.execute(FLOOR_SQL, (thread_id,)) as cur:
            (blob,) = await cur.fetchone()
        return lazy.parse(blob)

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()


async def size_sweep(report: Report, sizes: list[int], work: Path) -> None:
    """Floor, route in-process (cold and repeat), route over HTTP, /state over HTTP."""
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(
            langgraph_dev(
                work / "server",
                work / "server-data",
                extra_graphs={"bench": "bench/graphs.py:make_bench_graph"},
            )
        )
        threads: dict[tuple[str, int], str] = {}
        for mode in ("plain", "delta"):
            for size in sizes:
                print(f"  seeding {mode} thread of {size} messages", flush=True)
                threads[(mode, size)] = await seed.thread_via_server(server.url, mode, size)
        local = InProcess(server.sessions_db)
        floor = Floor(server.sessions_db)
        postgres_threads: dict[tuple[str, int], str] = {}
        postgres_db = stack.enter_context(bench_postgres.database())
        if postgres_db is not None:
            for mode, size in threads:
                print(f"  seeding {mode} thread of {size} messages in Postgres", flush=True)
                postgres_threads[(mode, size)] = await bench_postgres.seed(postgres_db, mode, size)
            on_postgres = bench_postgres.PostgresInProcess(postgres_db)
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
            for (mode, size), thread_id in threads.items():

                async def over_http(tid: str = thread_id) -> None:
                    (await http.get(route(tid))).raise_for_status()

                async def state(tid: str = thread_id) -> None:
                    (await http.get(f"/threads/{tid}/state")).raise_for_status()

                methods = {
                    "floor": lambda tid=thread_id: floor(tid),
                    "route in-process": lambda tid=thread_id: local.cold(tid),
                    "route in-process, repeat poll": lambda tid=thread_id: local.fetch(tid),
                    "route over HTTP": over_http,
                    "GET /threads/{id}/state": state,
                }
                if (mode, size) in postgres_threads:
                    pg_thread = postgres_threads[(mode, size)]
                    methods["route in-process, Postgres"] = lambda t=pg_thread: on_postgres.cold(t)
                rounds = 25 if size <= 2_000 else 9
                report.sizes[(mode, size)] = await interleaved(methods, rounds)
                body = (await local.get(thread_id)).content
                content = json.loads(body)["content"]
                report.response_bytes[(mode, size)] = (len(body), len(content.encode()))
                print(
                    f"  {mode:5} {size:>6}: "
                    + ", ".join(f"{k} {ms(v)}" for k, v in report.sizes[(mode, size)].items()),
                    flush=True,
                )
        await local.close()
        await floor.close()
        if postgres_threads:
            await on_postgres.close()


async def flatness(report: Report, work: Path) -> None:
    """Same thread, 10 vs 10,000 threads in the store; 10 vs 10,000 checkpoints in it."""
    few, many = work / "few-threads.db", work / "many-threads.db"
    # The thread read is the same 200-message one in both stores; the others are small
    # real threads cloned by SQL (10,000 copies of a large one would not fit a disk).
    await seed.thread_direct(few, "template", "plain", 200)
    await seed.thread_direct(few, "small", "plain", 3)
    seed.copy_db(few, many)
    seed.clone_threads(few, "small", 8)
    seed.clone_threads(many, "small", 9_998)
    stores = {"10 threads": InProcess(few), "10,000 threads": InProcess(many)}
    report.flat["threads"] = await interleaved(
        {name: lambda s=store: s.cold("template") for name, store in stores.items()}, 40
    )
    for store in stores.values():
        await store.close()

    deep = work / "checkpoints.db"
    print("  seeding threads of 10 and 10,000 checkpoints", flush=True)
    await seed.long_thread(deep, "short", 10)
    await seed.long_thread(deep, "long", 10_000)
    store = InProcess(deep)
    report.flat["checkpoints"] = await interleaved(
        {
            "10 checkpoints": lambda: store.cold("short"),
            "10,000 checkpoints": lambda: store.cold("long"),
        },
        40,
    )
    await store.close()


async def long_poll(report: Report, work: Path) -> None:
    """Wake-up delay after the final commit, and the CPU cost of idle waiters."""
    from bench.waiting import idle_waiter_cpu, wake_delays

    db = work / "long-poll.db"
    delays = await wake_delays(db, InProcess(db), runs=10)
    report.long_poll["wake median"] = statistics.median(delays)
    report.long_poll["wake max"] = max(delays)
    cpu_share, window = await idle_waiter_cpu(db, InProcess(db), waiters=100)
    report.long_poll["idle cpu share"] = cpu_share
    report.long_poll["idle window"] = window


async def load(report: Report, work: Path) -> None:
    """100 pollers (half wait=0 every second, half wait=30) while a run writes a
    checkpoint every 100 ms; the app in its own process, the writer in another."""
    db = work / "load" / "sessions.db"
    db.parent.mkdir()
    await seed.thread_direct(db, "seed", "plain", 20)
    steps = 60
    unloaded = writer_steps(db, "unloaded", steps)
    port = free_port()
    env = {**os.environ, "EVOSCIENTIST_DATA_DIR": str(db.parent)}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "evoscientist_final_answer.http.app:app",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up_app(url, server)
        async with contextlib.AsyncExitStack() as stack:
            # A client (and connection) per poller, as each WebUI is its own browser: one
            # shared httpx pool serialises 100 requests in the load generator itself (its
            # p99 was the pool's, hundreds of ms, the server answering each in 1-3 ms).
            clients = [
                await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=60))
                for _ in range(100)
            ]
            writer = asyncio.create_task(asyncio.to_thread(writer_steps, db, "loaded", steps))
            await thread_exists(url, "loaded")  # the writer process is up and has written
            latencies, errors = await pollers(clients, "loaded", writer)
        loaded = await writer
    finally:
        stop(server)
    report.load = {
        "errors": errors,
        "requests": len(latencies),
        "p50": percentile(latencies, 0.5),
        "p99": percentile(latencies, 0.99),
        "step unloaded": statistics.mean(unloaded),
        "step loaded": statistics.mean(loaded),
    }


async def thread_exists(url: str, thread_id: str) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        for _ in range(600):
            if (await http.get(route(thread_id))).status_code == 200:
                return
            await asyncio.sleep(0.05)
    raise RuntimeError(f"thread {thread_id} never appeared")


def wait_until_up_app(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            # The complete app serves the route and its OpenAPI document (no /api/models:
            # that is the demo's).
            if httpx.get(f"{url}{OPENAPI_PATH}", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the app did not start")


def writer_steps(db: Path, thread_id: str, steps: int) -> list[float]:
    output = subprocess.run(
        [sys.executable, "-m", "bench.writer", str(db), thread_id, str(steps)],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    ).stdout
    return json.loads(output)


async def pollers(
    clients: list[httpx.AsyncClient], thread_id: str, writer: asyncio.Task
) -> tuple[list[float], int]:
    latencies: list[float] = []
    errors = 0
    kinds: dict[str, bool] = {}

    async def poll(http: httpx.AsyncClient, wait: int) -> None:
        nonlocal errors
        while not writer.done():
            started = time.perf_counter()
            try:
                response = await http.get(route(thread_id), params={"wait": wait} if wait else {})
                if response.status_code != 200:
                    errors += 1
                    kinds[f"{response.status_code} {response.text[:120]}"] = True
                elif wait == 0:
                    latencies.append(time.perf_counter() - started)
                if response.status_code == 200 and response.json()["complete"]:
                    return
            except httpx.HTTPError as exc:
                errors += 1
                kinds[type(exc).__name__] = True
            if wait == 0:
                await asyncio.sleep(1.0)

    await asyncio.gather(*(poll(http, 0 if i % 2 else 30) for i, http in enumerate(clients)))
    if kinds:
        print("  load errors:", "; ".join(kinds), flush=True)
    return latencies, errors


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--sizes", default="20,200,2000,10000")
    parser.add_argument(
        "--only", default="sizes,flat,long-poll,load,crowd,round-two,first-poll,rollback"
    )
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    parts = set(args.only.split(","))
    report = Report()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="evosci-bench-") as tmp:
        work = Path(tmp)
        if "sizes" in parts:
            print("size sweep", flush=True)
            await size_sweep(report, sizes, work)
        if "flat" in parts:
            print("flatness", flush=True)
            await flatness(report, work)
        if "long-poll" in parts:
            print("long-poll", flush=True)
            await long_poll(report, work)
        if "load" in parts:
            print("load", flush=True)
            await load(report, work)
        if "crowd" in parts or "crowd-route-only" in parts:
            print("a thousand waiting browsers", flush=True)
            report.crowd = CrowdReport()
            await crowd(report.crowd, work, complete_app="crowd" in parts)
        if "round-two" in parts:
            from bench.round_two import RoundTwo, measure

            print("round two: Postgres, first reads, HTTP floor", flush=True)
            report.round_two = RoundTwo()
            await measure(report.round_two, sizes, work)
        if "first-poll" in parts:
            from bench.first_poll import FirstPoll
            from bench.first_poll import measure as first_poll

            print("polls after a new checkpoint (route only), HTTP floor", flush=True)
            report.first_poll = FirstPoll()
            await first_poll(report.first_poll, work)
        if "rollback" in parts:
            from bench import rollback

            print("rollback in a large store", flush=True)
            report.rollback = rollback.RollbackReport()
            await rollback.measure(report.rollback, work)
    report.seconds = time.perf_counter() - started
    from bench.report import write

    ok = write(report, Path(args.out), machine=machine(), when=datetime.now(UTC))
    return 0 if ok else 1


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
        cpu = model
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"
