"""``python -m bench.js_server``: the route on LangGraph's JavaScript server (the hono route
in a real ``langgraphjs dev``) and on its sidecar, against that server's own floor, side
by side in the same rounds; writes its section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
from langgraph_sdk import get_client

from bench.run import machine
from bench.timing import interleaved, ms
from tests.support.contract_graph import GRAPH_ID
from tests.support.js_server import js_server
from tests.support.sidecar import sidecar

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "benchmarks.md"
HEADING = "## LangGraph's JavaScript server"
# Thread sizes, in messages: a short chat, and a long one (seeded in one state update).
SIZES = (2, 2_000)  # one turn; a history of 1,996 and two turns
ROUNDS = 200
NEW_RUN_ROUNDS = 40
Q = "What is a control group?"


@dataclass
class Measured:
    polls: dict[int, dict[str, float]] = field(default_factory=dict)
    new_runs: dict[int, dict[str, float]] = field(default_factory=dict)


async def _thread(api_url: str, size: int) -> str:
    client = get_client(url=api_url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        await _turn(client, thread_id)
        if size > 4:
            history = [
                {"type": "human" if i % 2 == 0 else "ai", "content": f"turn {i}: " + "x" * 200}
                for i in range(size - 4)
            ]
            await client.threads.update_state(thread_id, {"messages": history}, as_node="agent")
            await _turn(client, thread_id)
        return thread_id
    finally:
        await client.aclose()


async def _turn(client, thread_id: str) -> None:  # type: ignore[no-untyped-def]
    await client.runs.wait(
        thread_id, GRAPH_ID, input={"messages": [{"role": "human", "content": Q}]}
    )


def _get(http: httpx.AsyncClient, url: str) -> Callable[[], Awaitable[object]]:
    async def sample() -> None:
        (await http.get(url)).raise_for_status()

    return sample


async def measure(work: Path) -> Measured:
    """On one keep-alive connection: the unchanged poll (a finished thread asked again)
    against ``GET /ok``, the server's cheapest request; and the answer right after a new
    run against ``GET /threads/{id}/state``, the read it is built on (each round adds a
    turn, untimed, then times both in alternating order)."""
    measured = Measured()
    with js_server(work / "js") as server, sidecar(server.url, work / "sidecar") as side:
        async with httpx.AsyncClient(timeout=60) as http:
            for size in SIZES:
                thread_id = await _thread(server.url, size)
                route = f"/api/threads/{thread_id}/final-answer"
                measured.polls[size] = await interleaved(
                    {
                        "GET /ok": _get(http, f"{server.url}/ok"),
                        "route, unchanged": _get(http, server.url + route),
                        "GET /threads/{id}/state": _get(
                            http, f"{server.url}/threads/{thread_id}/state"
                        ),
                        "sidecar, unchanged": _get(http, side.url + route),
                    },
                    ROUNDS,
                    warmup=20,
                )
                print(f"  {size} msgs, unchanged: {measured.polls[size]}", flush=True)
                measured.new_runs[size] = await _after_new_runs(
                    http, server.url, side.url, thread_id
                )
                print(f"  {size} msgs, after a run: {measured.new_runs[size]}", flush=True)
    return measured


async def _after_new_runs(
    http: httpx.AsyncClient, api_url: str, side_url: str, thread_id: str
) -> dict[str, float]:
    client = get_client(url=api_url, api_key=None)
    route = f"/api/threads/{thread_id}/final-answer"
    methods = {
        "route": _get(http, api_url + route),
        "GET /threads/{id}/state": _get(http, f"{api_url}/threads/{thread_id}/state"),
        "sidecar": _get(http, side_url + route),
    }
    samples: dict[str, list[float]] = {name: [] for name in methods}
    try:
        for index in range(NEW_RUN_ROUNDS):
            await _turn(client, thread_id)
            names = list(methods)
            if index % 2:
                names.reverse()
            for name in names:
                started = time.perf_counter()
                await methods[name]()
                samples[name].append(time.perf_counter() - started)
    finally:
        await client.aclose()
    return {name: statistics.median(values) for name, values in samples.items()}


# The goals: an unchanged poll of a short thread costs about one request of the server's
# own; of a long one, no more than the state; the first read after a run, about the
# state it is built on.
UNCHANGED_VS_OK = 1.3
UNCHANGED_LONG_VS_STATE = 1.05
NEW_RUN_VS_STATE = 1.2


def _row(target: str, route: float, floor: float, goal: float | None) -> tuple[str, str, bool]:
    ratio = route / floor
    return (
        target if goal is None else f"{target} ≤ {goal}×",
        f"{ratio:.2f}× ({ms(route)} vs {ms(floor)})",
        goal is None or ratio <= goal,
    )


def section(measured: Measured, seconds: float) -> tuple[list[str], bool]:
    rows: list[tuple[str, str, bool]] = []
    for size in SIZES:
        poll, fresh = measured.polls[size], measured.new_runs[size]
        state = "GET /threads/{id}/state"
        if size == SIZES[0]:
            rows.append(
                _row(
                    f"{size:,} msgs: route, unchanged poll vs `GET /ok`",
                    poll["route, unchanged"],
                    poll["GET /ok"],
                    UNCHANGED_VS_OK,
                )
            )
        else:
            rows.append(
                _row(
                    f"{size:,} msgs: route, unchanged poll vs `{state}`",
                    poll["route, unchanged"],
                    poll[state],
                    UNCHANGED_LONG_VS_STATE,
                )
            )
        rows.append(
            _row(
                f"{size:,} msgs: route, first read after a new run vs `{state}`",
                fresh["route"],
                fresh[state],
                NEW_RUN_VS_STATE,
            )
        )
        rows.append(
            _row(
                f"{size:,} msgs: sidecar, unchanged poll vs `GET /ok` (reported)",
                poll["sidecar, unchanged"],
                poll["GET /ok"],
                None,
            )
        )
    lines = [
        HEADING,
        "",
        "`python -m bench.js_server` (part of `make bench`): the route of "
        "`@evoscientist/final-answer/hono` in a real `langgraphjs dev` (tests/jsserver: "
        "`@langchain/langgraph-api` 1.5.1), and the Python complete app as its sidecar "
        "(`EVOSCIENTIST_READ_FROM=api`), on the contract graph; sequential requests on one "
        "keep-alive connection, medians. The unchanged poll is interleaved with the "
        f"server's own requests over {ROUNDS} rounds; each of {NEW_RUN_ROUNDS} rounds of "
        "the answer after a new run first adds a turn (untimed), then reads the route, "
        "the state and the sidecar in alternating order. The long thread's history is "
        "seeded in one state update (200-character messages). "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}, {seconds:.0f} s.",
        "",
        "| target | measured | met |",
        "|---|---|---|",
        *(f"| {t} | {m} | {'yes' if ok else '**no**'} |" for t, m, ok in rows),
        "",
        "Inside `langgraphjs dev` the route asks the server's own storage first (the "
        "server lends it to its routes on each request's Hono context): the thread's record "
        "and runs, in memory, under the caller's auth. They make a change token "
        "(`route/change-token.js`: the thread's status, `updated_at`, its `values` object, "
        "which a state update replaces although it keeps `updated_at`, and its runs), and "
        "while the token is the one an answer was read under, the route answers that "
        "answer, cached per caller, thread and run, without a read; a 304 so costs no "
        "API call. While a run is queued or executing there is no token (its checkpoints "
        "touch no record) and every poll reads. A read, on a changed token, takes the "
        "thread's state, status and runs from the storage too, shaped as the API writes "
        "them: no request through the server's stack (through the API a read is three). "
        "Where the "
        "server lends no storage "
        "(its production image runs the Hono app in another process, or `apiUrl` points "
        "elsewhere) the route reads the API alone: the thread's status, its "
        "state and its queued runs, three requests a poll. No API call short of the "
        "whole state sees a state update (it moves no `updated_at` and no run) or a "
        "deleted run's checkpoints, so a loopback call as the token would answer stale. "
        "The sidecar is in that place: it reads the server over a socket, the thread's "
        "status then its state each poll (and the runs when the answer is not settled), "
        "and has no token it could trust; its floor is those requests.",
        "",
        "| thread | `GET /ok` | route, unchanged | `GET /threads/{id}/state` | sidecar, "
        "unchanged | route after a new run | state after a new run | sidecar after a new run |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in SIZES:
        poll, fresh = measured.polls[size], measured.new_runs[size]
        lines.append(
            f"| {size:,} msgs | {ms(poll['GET /ok'])} | {ms(poll['route, unchanged'])} | "
            f"{ms(poll['GET /threads/{id}/state'])} | {ms(poll['sidecar, unchanged'])} | "
            f"{ms(fresh['route'])} | {ms(fresh['GET /threads/{id}/state'])} | "
            f"{ms(fresh['sidecar'])} |"
        )
    return lines, all(ok for _, _, ok in rows)


def write(lines: list[str], out: Path) -> None:
    """Replace this section of ``out`` (or append it)."""
    text = out.read_text() if out.exists() else ""
    start = text.find(HEADING)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    else:
        end = text.find("\n## ", start + len(HEADING))
        rest = "" if end < 0 else text[end:]
        text = text[:start] + "\n".join(lines) + "\n" + rest
    out.write_text(text)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.js_server")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="evosci-bench-js-") as tmp:
        measured = await measure(Path(tmp))
    lines, ok = section(measured, time.perf_counter() - started)
    write(lines, Path(args.out))
    print(f"wrote {args.out}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
