"""``python -m bench.upstream`` (``make bench-upstream``): the crowd scenarios (a thousand
held long-polls, ``bench/crowd.py``) inside upstream EvoScientist 0.3.8's own server with
the one-line adoption (``tests/upstream/server.py``), against the same targets as ours.

There, nothing of our app runs but the routes: no lifespan, no front door, no collector
tuning. The agent is upstream's main agent around the scripted model; a run streams 21
tokens at ``TOKEN_DELAY`` each, about as long as the offline agent's run in ``make
bench``. Writes docs/benchmarks-upstream.md (``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

from bench import crowd as crowd_bench
from bench.crowd import (
    FLOORS,
    HOST_FLOOR_APP,
    REPEATS,
    ROUTE_ONLY_REPEATS,
    SERVER_ARGS,
    THREADS,
    CrowdReport,
    idle_and_abort,
    summary,
)
from bench.loadgen import raise_fd_limit
from bench.report import crowd_section, crowd_targets
from bench.run import machine
from tests.upstream.env import STAMP_NAME, VENV, UpstreamEnv
from tests.upstream.server import upstream_server
from tests.upstream.site.scripted_model import answer_for

REPO = Path(__file__).resolve().parents[1]
TOKEN_DELAY = "0.06"
UPSTREAM_APP = "EvoScientist.langgraph_dev.http:app"


def expected(index: int) -> str:
    """The scripted model's answer to the crowd's question ``index`` (no tool call)."""
    return answer_for(crowd_bench.question(index))


async def measure(report: CrowdReport, work: Path) -> None:
    raise_fd_limit()  # the server inherits it: 1,000 connections need 1,000 fds
    # The scenarios check every held answer against the agent's: here, the scripted one.
    crowd_bench.expected = expected
    # upstream's own app, served through the host floor (two routes of the bench's in
    # front of it, ``bench/host_floor.py``) so that the floor runs in the same server.
    report.route_only_app = UPSTREAM_APP
    report.route_only_is_main = True
    with upstream_server(
        UpstreamEnv(VENV),
        work,
        args=SERVER_ARGS,
        http_app=HOST_FLOOR_APP,
        SCRIPTED_DELAY=TOKEN_DELAY,
        BENCH_HOST_APP=UPSTREAM_APP,
    ) as server:
        await crowd_bench.scenario(server, "one", False, 0)  # warms the server up
        first = THREADS
        for kind, repeats in REPEATS.items():
            alone, crowded = [], []
            for _ in range(repeats):  # interleaved, as in make bench
                alone.append(await crowd_bench.scenario(server, kind, False, first))
                crowded.append(await crowd_bench.scenario(server, kind, True, first + THREADS))
                first += 2 * THREADS
            report.scenarios[kind] = summary(alone, crowded)
            print(f"  {kind}: {report.scenarios[kind]}", flush=True)
        for floor in FLOORS:
            alone, crowded = [], []
            for _ in range(ROUTE_ONLY_REPEATS[floor]):
                alone.append(await crowd_bench.scenario(server, floor, False, first))
                crowded.append(await crowd_bench.scenario(server, floor, True, first + THREADS))
                first += 2 * THREADS
            report.route_only[floor] = summary(alone, crowded)
            print(f"  {floor}: {report.route_only[floor]}", flush=True)
        await idle_and_abort(server, report)
        print(f"  idle: {report.idle}", flush=True)
    report.load_avg = " ".join(Path("/proc/loadavg").read_text().split()[:3])


def write(report: CrowdReport, out: Path, seconds: float) -> bool:
    holder = SimpleNamespace(crowd=report)
    rows = crowd_targets(holder)
    section = crowd_section(holder)
    table = section[next(i for i, line in enumerate(section) if line.startswith("| scenario")) :]
    lines = [
        "# Inside upstream EvoScientist 0.3.8",
        "",
        "`make bench-upstream` (`python -m bench.upstream`): the crowd scenarios of "
        "[benchmarks.md](benchmarks.md) inside upstream's own server (its graphs, "
        "checkpointer, `http.py` with the one-line adoption of "
        "[upstream-adoption.md](upstream-adoption.md); `langgraph dev "
        "--n-jobs-per-worker 10` from `.venv-upstream`), where nothing of our app runs but "
        "the routes: no lifespan, no front door, no collector tuning. Upstream's app is "
        "served through `bench/host_floor.py`, which puts two routes of the bench in front "
        "of it for the host's floor (a thousand held requests that do nothing, measured in "
        "the same server). The agent is upstream's "
        f"main agent around the scripted model (21 tokens, {TOKEN_DELAY} s each). "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}, {seconds:.0f} s; load "
        f"average at the end {report.load_avg}.",
        "",
        "| target | measured | met |",
        "|---|---|---|",
        *(
            f"| {target} | {measured} | {'yes' if met else '**no**'} |"
            for target, measured, met in rows
        ),
        "",
        *table,
    ]
    out.write_text("\n".join(lines))
    return all(met for _, _, met in rows)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.upstream")
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks-upstream.md"))
    args = parser.parse_args(argv)
    if not (VENV / STAMP_NAME).is_file():
        print(f"{VENV} is not built: run `make upstream-env` first", file=sys.stderr)
        return 2
    report = CrowdReport()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="evosci-bench-upstream-") as tmp:
        await measure(report, Path(tmp))
    ok = write(report, Path(args.out), time.perf_counter() - started)
    print(f"wrote {args.out}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
