"""A thousand waiting browsers: held ``wait=30`` long-polls (``bench.loadgen``) against a
real ``langgraph dev`` running the offline agent, each scenario's runs once without
waiters and once with them; the server's CPU, memory and descriptors from ``/proc``.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_client

from bench import host_floor
from bench.asgi import route
from bench.commit_clock import CommitClock
from bench.held_polls import LoadGen
from bench.loadgen import raise_fd_limit
from bench.proc_stats import cpu_seconds, cpu_share, open_fds, rss_bytes
from bench.timing import percentile
from EvoScientist.offline_model import answer_for, notes_for
from tests.support.servers import DevServer, langgraph_dev

ASSISTANT = "EvoScientist"
WAITERS = 1_000
THREADS = 100
# Seconds per streamed token of the offline agent: runs of about 1.5 s, so that 100 of
# them, ten at a time, end within the waiters' ``wait=30``.
TOKEN_DELAY = "0.01"
# After the waiters connect, before idle is measured: their first reads are done.
SETTLE_SECONDS = 8.0
# Scenarios and how often each runs alone and crowded, interleaved: a single run of
# about 2 s alone varies by 20 % from one to the next (the runtime's flush, a
# collection), more than the effect measured; a 14-s scenario averages that out itself.
REPEATS = {"one": 5, "spread": 1, "fresh": 1, "mixed": 5}
# langgraph dev runs one run at a time unless told otherwise; a team's server runs more.
SERVER_ARGS = ("--n-jobs-per-worker", "10")
# The complete app, front door and collector settings included, as before the route
# moved into its package; the demo's route-only adoption (``final_answer_routes()``
# alone, as upstream takes it) answers every poll too, but has neither.
SERVER_APP = "evoscientist_final_answer.http.app:app"
DEMO_APP = "EvoScientist.langgraph_dev.http:app"
# Waiters on 100 threads hold their longest allowed wait: the last of 100 runs, ten at
# a time, may end past 30 s on a loaded machine (a WebUI would simply poll again).
WAIT = 60
IDLE_WINDOW = 5.0
ABORT_SAMPLE = 0.2
# Busy after an abort: more than two clock ticks of CPU in a sample.
BUSY_SHARE = 0.1
# langgraph_runtime_inmem's persistence flush period.
FLUSH_SECONDS = 10.0


@dataclass
class CrowdReport:
    scenarios: dict[str, dict[str, Any]] = field(default_factory=dict)
    idle: dict[str, float] = field(default_factory=dict)
    load_avg: str = ""
    # A host's own app with only ``final_answer_routes()`` (no front door, lifespan or
    # collector of ours), and the host's floor (``host_floor``) in the same server.
    route_only: dict[str, dict[str, Any]] = field(default_factory=dict)
    route_only_app: str = ""
    # Inside upstream's server the main scenarios are the route-only ones: only the
    # floor is measured beside them.
    route_only_is_main: bool = False


# ---------------------------------------------------------------- runs


def question(index: int) -> str:
    return f"How should experiment {index} be controlled?"


def expected(index: int) -> str:
    text = question(index)
    return answer_for(text, [notes_for(text)])


def stamp(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


async def start_runs(sdk: Any, threads: list[str], first: int) -> list[dict[str, Any]]:
    return list(
        await asyncio.gather(
            *(
                sdk.runs.create(
                    thread_id,
                    ASSISTANT,
                    input={"messages": [{"role": "user", "content": question(first + i)}]},
                )
                for i, thread_id in enumerate(threads)
            )
        )
    )


async def finish(
    sdk: Any, http: httpx.AsyncClient, runs: list[dict[str, Any]]
) -> tuple[list[float], list[float], list[str]]:
    """Wait for every run; each run's final checkpoint time and id, and how long after it
    the server marked the run done (until then the route must say not complete: the
    server's status wins).

    One search every 250 ms finds the threads no longer busy, and only their runs are
    read: the measuring adds a few requests a second to the server it measures, not one
    per run every 250 ms (100 runs: 400 requests a second, most of a core)."""
    pending = list(runs)
    ended: dict[str, float] = {}
    while pending:
        await asyncio.sleep(0.25)
        threads = await sdk.threads.search(
            ids=[run["thread_id"] for run in pending],
            select=["thread_id", "status"],
            limit=len(pending),
        )
        idle = {t["thread_id"] for t in threads if t["status"] != "busy"}
        states = await asyncio.gather(
            *(
                sdk.runs.get(run["thread_id"], run["run_id"])
                for run in pending
                if run["thread_id"] in idle
            )
        )
        for state in states:
            if state["status"] not in ("pending", "running"):
                ended[state["run_id"]] = stamp(state["updated_at"])
        pending = [run for run in pending if run["run_id"] not in ended]
    completed, checkpoints = [], []
    for run in runs:
        response = await http.get(route(run["thread_id"]), params={"run_id": run["run_id"]})
        body = response.json()
        assert body["complete"] and body["status"] == "success", body
        completed.append(stamp(body["completed_at"]))
        checkpoints.append(body["checkpoint_id"])
    lags = [ended[run["run_id"]] - at for run, at in zip(runs, completed, strict=True)]
    return completed, lags, checkpoints


async def join_then_read(sdk: Any, http: httpx.AsyncClient, run: dict[str, Any]) -> dict[str, Any]:
    """Another client: ``/runs/{id}/join``, then one read of the route at once."""
    await sdk.runs.join(run["thread_id"], run["run_id"])
    return (await http.get(route(run["thread_id"]))).json()


# The host's floors: the held path and the path that releases it.
FLOORS = {
    "floor": (host_floor.HOLD_PATH, host_floor.RELEASE_PATH),
    "floor-pass": (host_floor.PASS_HOLD_PATH, host_floor.PASS_RELEASE_PATH),
}


async def scenario(server: DevServer, kind: str, with_waiters: bool, first: int) -> dict[str, Any]:
    """``kind``: ``one`` (1,000 waiters on one running thread), ``spread`` (10 per thread
    on 100 threads that have checkpoints, by ``run_id``), ``fresh`` (10 per thread on 100
    threads with no checkpoint yet, held before their runs are created), ``mixed`` (as
    ``one``, and a client that joins the run and reads the route the moment the join
    returns: the read that first sees the end must not take the waiters' wake),
    ``floor`` (as ``one``, but the thousand hold ``bench/host_floor.py``'s do-nothing
    route, released once the run has ended: their wake counts from the release),
    ``floor-pass`` (as ``floor``, but the release answers all thousand in one pass, as
    the route's poll does: ``host_floor.HoldPass``)."""
    sdk = get_client(url=server.url, api_key=None, timeout=120)
    async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
        count = 1 if kind in ("one", "mixed", *FLOORS) else THREADS
        threads = [
            (await sdk.threads.create(graph_id=ASSISTANT))["thread_id"] for _ in range(count)
        ]
        if kind == "spread":  # a checkpoint each, from an earlier turn
            for thread_id in threads:
                await sdk.threads.update_state(
                    thread_id, {"messages": [{"role": "user", "content": "earlier"}]}
                )
        per_thread = WAITERS // count
        loadgen: LoadGen | None = None
        paths: list[str] = []
        if with_waiters and kind == "fresh":
            paths = [f"{route(t)}?wait={WAIT}" for t in threads for _ in range(per_thread)]
            loadgen = await LoadGen.hold(server.port, paths)
            await asyncio.sleep(1.0)  # every request parked
        clock = CommitClock(server.sessions_db, threads)
        await clock.start()
        runs = await start_runs(sdk, threads, first)
        if with_waiters and kind in ("one", "mixed", *FLOORS):
            while (await http.get(route(threads[0]))).json()["status"] != "running":
                await asyncio.sleep(0.02)  # its first checkpoint is written
            held = FLOORS[kind][0] if kind in FLOORS else route(threads[0])
            paths = [f"{held}?wait=30"] * WAITERS
            loadgen = await LoadGen.hold(server.port, paths)
        elif with_waiters and kind == "spread":
            paths = [
                f"{route(run['thread_id'])}?run_id={run['run_id']}&wait={WAIT}"
                for run in runs
                for _ in range(per_thread)
            ]
            loadgen = await LoadGen.hold(server.port, paths)
        joiner = (
            asyncio.create_task(join_then_read(sdk, http, runs[0])) if kind == "mixed" else None
        )
        completed, lags, checkpoints = await finish(sdk, http, runs)
        if joiner is not None:
            read = await joiner
            assert read["complete"] and read["content"] == expected(first), read
        await clock.stop()
        released = time.time()
        if kind in FLOORS and loadgen is not None:
            await http.post(FLOORS[kind][1])
        results = await loadgen.results() if loadgen is not None else []
    await sdk.aclose()
    # From the first checkpoint of any run (the server began executing) to the last
    # run's final one: a lone run sometimes waits 0.4 s in the in-memory queue after
    # its creation, waiters or not (the walls were two-humped), which is not theirs.
    started = min(clock.first_commit(run["thread_id"]) or stamp(run["created_at"]) for run in runs)
    ended = max(
        clock.committed(run["thread_id"], checkpoint) or at
        for run, at, checkpoint in zip(runs, completed, checkpoints, strict=True)
    )
    measured: dict[str, Any] = {"wall": ended - started, "lags": lags}
    if results and kind in FLOORS:
        answered = [r for r in results if r["status"] == 200]
        measured.update(
            answers=len(results),
            right=len(answered),
            wrong=0,
            unfinished=len(results) - len(answered),
            wakes=[r["received"] - released for r in answered],
            commit_lags=[0.0 for _ in runs],
        )
    elif results:
        index = {run["thread_id"]: i for i, run in enumerate(runs)}
        # From the final checkpoint's commit (its ``ts`` when the clock missed it).
        done = {
            run["thread_id"]: clock.committed(run["thread_id"], checkpoint) or at
            for run, at, checkpoint in zip(runs, completed, checkpoints, strict=True)
        }
        wakes, right, wrong, unfinished = [], 0, 0, 0
        for path, result in zip(paths, results, strict=True):
            thread_id = path.split("/")[3]
            if result["status"] == 200 and result.get("complete"):
                ok = result["content"] == expected(first + index[thread_id])
                right += ok
                wrong += not ok
                wakes.append(result["received"] - done[thread_id])
            else:
                unfinished += 1
        measured.update(
            answers=len(results),
            right=right,
            wrong=wrong,  # complete, with another answer
            unfinished=unfinished,  # not complete when the wait ran out (or an error)
            repolls=sum(result.get("repolls", 0) for result in results),
            wakes=wakes,
            commit_lags=[
                done[run["thread_id"]] - at for run, at in zip(runs, completed, strict=True)
            ],
        )
    return measured


def summary(alone: list[dict[str, Any]], crowded: list[dict[str, Any]]) -> dict[str, Any]:
    """Repeated scenarios side by side: median walls, counts summed, percentiles of the
    pooled delays."""
    lags = [lag for m in crowded for lag in m["lags"]]
    wakes = [wake for m in crowded for wake in m["wakes"]]
    commit_lags = [lag for m in crowded for lag in m["commit_lags"]]
    return {
        "wall alone": statistics.median(m["wall"] for m in alone),
        "wall": statistics.median(m["wall"] for m in crowded),
        "repeats": len(crowded),
        **{
            key: sum(m.get(key, 0) for m in crowded)
            for key in ("answers", "right", "wrong", "unfinished", "repolls")
        },
        "wake_p50": percentile(wakes, 0.5) if wakes else float("nan"),
        "wake_p99": percentile(wakes, 0.99) if wakes else float("nan"),
        "server lag p50": percentile(lags, 0.5),
        "server lag p99": percentile(lags, 0.99),
        "commit lag p50": percentile(commit_lags, 0.5),
        "commit lag p99": percentile(commit_lags, 0.99),
        # The route's floor: until the server marks the run done it says not complete.
        "done after commit p99": percentile(
            [
                lag - commit_lag
                for m in crowded
                for lag, commit_lag in zip(m["lags"], m["commit_lags"], strict=True)
            ],
            0.99,
        ),
    }


async def after_runtime_flush(workdir: Path) -> None:
    """Return just after the in-memory runtime's own periodic flush (it pickles its
    tables to ``.langgraph_api/`` every 10 s, tens of ms of CPU), so that the server's
    housekeeping does not land in the window measured after an abort."""
    ops = workdir / ".langgraph_api" / ".langgraph_ops.pckl"

    def newest() -> float:
        try:
            return ops.stat().st_mtime
        except OSError:
            return 0.0

    before = newest()
    deadline = time.monotonic() + 2 * FLUSH_SECONDS
    while newest() == before and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)  # the flush's last file written


async def idle_and_abort(server: DevServer, report: CrowdReport) -> None:
    """1,000 waiters held on 100 threads with no checkpoint: idle CPU, RSS per waiter,
    then all aborted at once: how soon the server is idle again, and its fds after."""
    pgid = server.process.pid
    sdk = get_client(url=server.url, api_key=None, timeout=60)
    threads = [(await sdk.threads.create())["thread_id"] for _ in range(THREADS)]
    await sdk.aclose()
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        assert (await http.get(route(threads[0]))).status_code == 200  # route warmed up
    await asyncio.sleep(1.0)
    fds_before, rss_before = open_fds(pgid), rss_bytes(pgid)
    # Both idle windows (5 s) start just after the runtime's own 10-s flush: neither
    # holds one (it costs tens of ms more with every run the server has kept).
    await after_runtime_flush(server.workdir)
    baseline = await cpu_share(pgid, IDLE_WINDOW)
    paths = [f"{route(t)}?wait=60" for t in threads for _ in range(WAITERS // THREADS)]
    attach_cpu = cpu_seconds(pgid)
    loadgen = await LoadGen.hold(server.port, paths)
    await asyncio.sleep(SETTLE_SECONDS)  # every request parked, its first reads done
    attach_cpu = cpu_seconds(pgid) - attach_cpu - baseline * SETTLE_SECONDS
    rss_held = rss_bytes(pgid)
    await after_runtime_flush(server.workdir)
    held = await cpu_share(pgid, IDLE_WINDOW)
    await after_runtime_flush(server.workdir)
    aborted_at = await loadgen.abort()
    busy_until = aborted_at
    cpu, wall = cpu_seconds(pgid), time.time()
    threshold = baseline + BUSY_SHARE
    samples = []
    while time.time() - aborted_at < 3.0:
        await asyncio.sleep(ABORT_SAMPLE)
        now_cpu, now = cpu_seconds(pgid), time.time()
        samples.append(round((now_cpu - cpu) / (now - wall), 3))
        if samples[-1] > threshold:
            busy_until = now
        cpu, wall = now_cpu, now
    print(f"  CPU share after the abort, per {ABORT_SAMPLE:g} s: {samples}", flush=True)
    await asyncio.sleep(1.0)
    report.idle = {
        "baseline cpu": baseline,
        "held cpu": held,
        "rss per waiter": (rss_held - rss_before) / len(paths),
        "attach cpu per waiter": attach_cpu / len(paths),
        "back to idle": max(busy_until - aborted_at, 0.0),
        "fds before": fds_before,
        "fds after": open_fds(pgid),
    }


# The route-only scenarios, each beside the host's floor: what the host's middleware
# costs a held request that does nothing, in the same server.
ROUTE_ONLY_REPEATS = {"one": 5, "mixed": 3, "floor": 5, "floor-pass": 5}
HOST_FLOOR_APP = f"{Path(host_floor.__file__).resolve()}:app"


async def route_only_scenarios(report: CrowdReport, server: DevServer, first: int) -> None:
    """In a server whose ``http.app`` is ``host_floor`` around a host app that took
    only ``final_answer_routes()``."""
    await scenario(server, "one", False, first)  # warms the server up
    first += THREADS
    for kind, repeats in ROUTE_ONLY_REPEATS.items():
        alone, crowded = [], []
        for _ in range(repeats):
            alone.append(await scenario(server, kind, False, first))
            crowded.append(await scenario(server, kind, True, first + THREADS))
            first += 2 * THREADS
        report.route_only[kind] = summary(alone, crowded)
        print(f"  route only, {kind}: {report.route_only[kind]}", flush=True)


async def crowd(report: CrowdReport, work: Path, *, complete_app: bool = True) -> None:
    """The crowd scenarios in the complete app, then in the demo's route-only adoption;
    ``complete_app=False`` measures the route-only ones alone
    (``python -m bench --only crowd-route-only``)."""
    raise_fd_limit()  # the server inherits it: 1,000 connections need 1,000 fds
    env = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": TOKEN_DELAY}
    first = THREADS  # every run its own question
    if complete_app:
        first = await complete_app_scenarios(report, work, env)
    # The demo's own ``http.app`` adopts the route as upstream does (route only).
    report.route_only_app = DEMO_APP
    with langgraph_dev(
        work / "crowd-route-only",
        work / "crowd-route-only-data",
        env={**env, "BENCH_HOST_APP": DEMO_APP},
        args=SERVER_ARGS,
        app=HOST_FLOOR_APP,
    ) as server:
        await route_only_scenarios(report, server, first)
    report.load_avg = " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def complete_app_scenarios(report: CrowdReport, work: Path, env: dict[str, str]) -> int:
    """The scenarios in the complete app; the first question number not yet asked."""
    with langgraph_dev(
        work / "crowd", work / "crowd-data", env=env, args=SERVER_ARGS, app=SERVER_APP
    ) as server:
        # A first run warms the server (graph, checkpointer, route).
        await scenario(server, "one", False, 0)
        first = THREADS  # every run its own question
        for kind, repeats in REPEATS.items():
            alone, crowded = [], []
            for _ in range(repeats):  # interleaved: the server's drift hits both alike
                alone.append(await scenario(server, kind, False, first))
                crowded.append(await scenario(server, kind, True, first + THREADS))
                first += 2 * THREADS
            report.scenarios[kind] = summary(alone, crowded)
            walls = [
                (round(a["wall"], 2), round(c["wall"], 2))
                for a, c in zip(alone, crowded, strict=True)
            ]
            print(f"  {kind}: walls alone/crowded {walls}: {report.scenarios[kind]}", flush=True)
        await idle_and_abort(server, report)
        print(f"  idle: {report.idle}", flush=True)
    return first
