"""Polls after a new checkpoint, in a host that took only the route: on a 2,000-message
thread in ``sessions.db``, how soon the new head is read and how little the polls after
it cost. Run alone with ``python -m bench --only first-poll``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph, add_messages
from typing_extensions import TypedDict

from bench import seed
from bench.asgi import call_asgi, route
from bench.graphs import DeltaState, Mode
from bench.http_floor import ANSWER, MODELS, OK, STATE, http_floor
from bench.timing import ms

SIZE = 2_000
ROUNDS = 25
DEMO_APP = "EvoScientist.langgraph_dev.http:routes_only_app"
READ = "read of the new checkpoint"
AFTER = "poll right after it"
SETTLED = "first poll past the commit's reports"
REPEAT = "repeat poll"
MISSING = "404 through the same app"
COLD_MISSING = "404 after the same idle"
COLUMNS = (READ, AFTER, SETTLED, REPEAT, MISSING, COLD_MISSING)
# The polls after the read of a new checkpoint, before the next repeat poll: the target.
AFTER_READ = (AFTER, SETTLED)
# Past the change signal's coalescing and trailing reports of the commit
# (``store.sqlite.change_signal``): a repeat poll then runs no query.
SETTLE_SECONDS = 0.1
AFTER_TARGET = 0.0005
HTTP_TARGET = 1.0


@dataclass
class FirstPoll:
    # mode -> column -> median seconds
    in_process: dict[str, dict[str, float]] = field(default_factory=dict)
    http: dict[str, float] = field(default_factory=dict)


class PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    todo: int


def turn_graph(mode: Mode, saver: AsyncSqliteSaver) -> Any:
    """One turn on the thread: the question comes as input, the answer is the step."""

    def reply(state: dict) -> dict:
        turn = len(state["messages"])
        return {"messages": [AIMessage(f"Answer to turn {turn}.", id=f"turn-{turn}")]}

    builder = StateGraph(DeltaState if mode == "delta" else PlainState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


async def polls(db: Path, mode: Mode, app: Any, rounds: int) -> dict[str, float]:
    """Median times over ``rounds`` rounds. Each commits a new checkpoint (a turn, on
    another connection), then times, one after the other, through ``app``:

    - *read of the new checkpoint*: the poll that finds the new head and decodes it, made
      the moment the commit returns (as a held poll wakes);
    - *poll right after it*: the answer cached per head; inside the change signal's
      trailing report of the commit, the wal-index's commit mark vouches instead (no query,
      no decode; ``store.sqlite.wal_index``);
    - *first poll past the commit's reports*: 100 ms later, the mark again, no query, on a
      process that slept; its floor is the last column;
    - *repeat poll*: the next, nothing written since (no query);
    - *404 through the same app*: a path no route has, the host's own floor;
    - *404 after the same idle*: 100 ms later again, the floor of a process that slept.

    The same rounds run on a plain thread and on a DeltaChannel one (the agent's channel)."""
    thread_id = f"{mode}-{SIZE}"
    await seed.thread_direct(db, thread_id, mode, SIZE)
    path = route(thread_id)

    async def get(target: str, expect: int = 200) -> float:
        started = time.perf_counter()
        status, body = await call_asgi(app, target)
        elapsed = time.perf_counter() - started
        if status != expect:
            raise RuntimeError(f"{target}: {status}: {body[:200]!r}")
        return elapsed

    for _ in range(3):  # the route's service made, the store opened and watched
        await get(path)
    samples: dict[str, list[float]] = {name: [] for name in COLUMNS}
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        graph = turn_graph(mode, saver)
        config = {"configurable": {"thread_id": thread_id}}
        for turn in range(rounds + 2):
            question = HumanMessage(f"Question {turn}?", id=f"question-{turn}")
            await graph.ainvoke({"messages": [question]}, config)
            timed = {READ: await get(path), AFTER: await get(path)}
            await asyncio.sleep(SETTLE_SECONDS)
            timed[SETTLED] = await get(path)
            timed[REPEAT] = await get(path)
            timed[MISSING] = await get("/api/no-such-route", expect=404)
            await asyncio.sleep(SETTLE_SECONDS)
            timed[COLD_MISSING] = await get("/api/no-such-route", expect=404)
            if turn >= 2:  # warm-up rounds
                for name, seconds in timed.items():
                    samples[name].append(seconds)
    return {name: statistics.median(values) for name, values in samples.items()}


async def measure(result: FirstPoll, work: Path, rounds: int = ROUNDS) -> None:
    data = work / "first-poll"
    data.mkdir()
    # The route-only app finds its store as a host's would: through the environment,
    # read by its first request.
    previous = os.environ.get("EVOSCIENTIST_DATA_DIR")
    os.environ["EVOSCIENTIST_DATA_DIR"] = str(data)
    try:
        from EvoScientist.langgraph_dev.http import routes_only_app

        for mode in ("plain", "delta"):
            print(f"  {mode} thread of {SIZE} messages, a new checkpoint per round", flush=True)
            result.in_process[mode] = await polls(
                data / "sessions.db", mode, routes_only_app, rounds
            )
            print(
                f"  {mode}: "
                + ", ".join(f"{k} {ms(v)}" for k, v in result.in_process[mode].items()),
                flush=True,
            )
    finally:
        if previous is None:
            os.environ.pop("EVOSCIENTIST_DATA_DIR", None)
        else:
            os.environ["EVOSCIENTIST_DATA_DIR"] = previous
    print("  HTTP against GET /ok", flush=True)
    with tempfile.TemporaryDirectory(dir=work) as server_work:
        result.http = await http_floor(Path(server_work))
    print("  " + ", ".join(f"{k} {ms(v)}" for k, v in result.http.items()), flush=True)


def targets(result: FirstPoll) -> list[tuple[str, str, bool]]:
    rows: list[tuple[str, str, bool]] = []
    if result.in_process:
        worst_mode, worst_poll = max(
            ((mode, poll) for mode in result.in_process for poll in AFTER_READ),
            key=lambda found: result.in_process[found[0]][found[1]],
        )
        worst = result.in_process[worst_mode][worst_poll]
        rows.append(
            (
                f"first poll after a new checkpoint ({SIZE:,} msgs, in-process through the "
                f"demo's route-only app) ≤ {ms(AFTER_TARGET)}",
                f"{ms(worst)} at most ({worst_mode}, {worst_poll}; "
                + "; ".join(
                    f"{mode}: right after {ms(m[AFTER])}, past the reports {ms(m[SETTLED])}, "
                    f"repeat {ms(m[REPEAT])}, 404 {ms(m[MISSING])}, "
                    f"404 after the same idle {ms(m[COLD_MISSING])}"
                    for mode, m in result.in_process.items()
                )
                + ")",
                worst <= AFTER_TARGET,
            )
        )
    if result.http:
        r = result.http[ANSWER] / result.http[OK]
        rows.append(
            (
                f"unchanged-thread poll over HTTP ≤ {HTTP_TARGET:.1f}× GET /ok",
                f"{r:.2f}×",
                r <= HTTP_TARGET,
            )
        )
    return rows


def section(result: FirstPoll) -> list[str]:
    lines: list[str] = []
    if result.in_process:
        lines += [
            "## Polls after a new checkpoint, route only",
            "",
            f"A {SIZE:,}-message thread in `sessions.db`, read in-process through "
            f"`{DEMO_APP}` (only `final_answer_routes()`, no middleware), its ASGI callable "
            "called directly. Each round another connection commits a new checkpoint (a "
            "turn); the moment the commit returns, the poll that reads it and the poll "
            "right after it (the answer cached per head; still inside the change "
            "signal's trailing report of the commit, but the wal-index's commit mark, "
            "unchanged since the read, vouches for the head: no query, no decode); "
            f"{SETTLE_SECONDS * 1000:.0f} ms later, past the signal's reports, the first "
            "poll after the idle (the mark again), a repeat poll (no query) and a 404 "
            f"through the same app; {SETTLE_SECONDS * 1000:.0f} ms later again, the same "
            "404 first after the idle: what any request costs a process that slept. "
            f"Medians of {ROUNDS} rounds; the target holds for both polls after the read.",
            "",
            "| thread | " + " | ".join(COLUMNS) + " |",
            "|---" * (len(COLUMNS) + 1) + "|",
        ]
        for mode, m in result.in_process.items():
            lines.append(
                f"| {mode}, {SIZE:,} msgs | " + " | ".join(ms(m[c]) for c in COLUMNS) + " |"
            )
        lines.append("")
    if result.http:
        ok = result.http[OK]
        lines += [
            "## Over HTTP, against the server's own floor",
            "",
            "One `langgraph dev`, a 20-message thread, sequential requests on one keep-alive "
            "connection, interleaved. The route reads the server's thread status from the "
            "in-memory runtime's own table (no request through the API per poll).",
            "",
            "| route | median | vs GET /ok |",
            "|---|---|---|",
            *(
                f"| `{name}` | {ms(result.http[name])} | {result.http[name] / ok:.2f}× |"
                for name in (OK, MODELS, ANSWER, STATE)
            ),
            "",
        ]
    return lines
