"""``answer.run_liveness``: ``judge``, every signal about an unfinished run, and where
they conflict; ``verdict``, the route's answer from the checkpoint's and the server's
facts, and the fact it asks for when one is missing. Pure: the states, answers and
views are what the readers and the server produce."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from evoscientist_final_answer.answer.result import FinalAnswer, Source
from evoscientist_final_answer.answer.run_liveness import (
    Ask,
    Evidence,
    Rules,
    RunNotFound,
    ServerRuns,
    Writer,
    judge,
    silent_for,
    verdict,
)
from evoscientist_final_answer.answer.status import RunState, RunStatus, run_error
from evoscientist_final_answer.settings import DEFAULT_RUN_SILENCE_SECONDS, run_silence_seconds

RUNNING = RunState(RunStatus.RUNNING)
PENDING = RunState(RunStatus.PENDING)
SUCCESS = RunState(RunStatus.SUCCESS)
FAILED = RunState(RunStatus.ERROR, error=run_error("run_failed", "boom", retryable=False))
BOUND = 60.0

API_RUN = Writer("run-1", "EvoScientist", silent_for=1.0)
API_RUN_QUIET = Writer("run-1", "EvoScientist", silent_for=BOUND * 10)
TUI_RUN = Writer(None, None, silent_for=1.0)
TUI_RUN_QUIET = Writer(None, None, silent_for=BOUND * 10)


def decide(
    state: RunState, writer: Writer, server: ServerRuns | None, *, shared: bool = False
) -> RunState:
    return judge(state, writer, server, shared_store=shared, silence_bound=BOUND)


def code(state: RunState) -> str | None:
    return state.error["code"] if state.error else None


@pytest.mark.parametrize(
    ("runs", "thread_status"),
    [
        ({"run-1": "running"}, "busy"),
        ({"run-1": "pending"}, "busy"),
        ({"other": "pending"}, "busy"),
    ],
)
def test_a_run_this_server_executes_or_queues_is_running_however_quiet(
    runs: dict[str, str], thread_status: str
) -> None:
    """A 2-minute tool call inside the server writes nothing for 2 minutes."""
    assert decide(RUNNING, API_RUN_QUIET, ServerRuns(thread_status, runs)) == RUNNING
    # A finished-looking checkpoint under an active run: the server lags, or a new run
    # is about to take the thread over.
    assert decide(SUCCESS, API_RUN, ServerRuns(thread_status, runs)).status is RunStatus.RUNNING


def test_an_api_run_this_server_does_not_know_is_lost_at_once() -> None:
    """kill -9 and restart: the in-memory runtime forgot the run (or the whole thread)."""
    for server in (
        ServerRuns(None, {}),
        ServerRuns("busy", {}),
        ServerRuns("idle", {"x": "success"}),
    ):
        lost = decide(RUNNING, API_RUN, server)
        assert (lost.status, code(lost), lost.error["retryable"]) == (
            RunStatus.ERROR,
            "run_lost",
            False,
        )


def test_on_a_shared_store_an_unknown_run_may_be_another_servers() -> None:
    """PostgreSQL shared by several servers: only silence can tell."""
    assert decide(RUNNING, API_RUN, ServerRuns(None, {}), shared=True) == RUNNING
    assert code(decide(RUNNING, API_RUN_QUIET, ServerRuns(None, {}), shared=True)) == "run_lost"


def test_a_tui_run_is_judged_by_silence_alone() -> None:
    """The TUI stamps no run id: no server knows its runs, alive or dead."""
    for server in (None, ServerRuns(None, {})):
        assert decide(RUNNING, TUI_RUN, server) == RUNNING
        assert code(decide(RUNNING, TUI_RUN_QUIET, server)) == "run_lost"
    assert decide(RUNNING, Writer(None, None, silent_for=None), None) == RUNNING


def test_outside_a_server_every_run_is_judged_by_silence() -> None:
    assert decide(RUNNING, API_RUN, None) == RUNNING
    assert code(decide(RUNNING, API_RUN_QUIET, None)) == "run_lost"
    assert decide(PENDING, Writer("run-1", None, silent_for=None), None) == PENDING


def test_a_run_cancelled_through_the_api_is_cancelled() -> None:
    """``POST …/cancel`` leaves the run ``interrupted`` and the thread ``interrupted``
    (which on its own would read as a human-in-the-loop pause)."""
    for thread_status in ("interrupted", "busy", "idle"):
        server = ServerRuns(thread_status, {"run-1": "interrupted"})
        cancelled = decide(RUNNING, API_RUN, server)
        assert (cancelled.status, code(cancelled)) == (RunStatus.ERROR, "run_cancelled")
        assert cancelled.error["retryable"] is False
        assert code(decide(PENDING, API_RUN, server)) == "run_cancelled"


def test_a_static_breakpoint_is_interrupted() -> None:
    """``interrupt_before``: the run succeeded, the thread waits, work is left."""
    paused = decide(RUNNING, API_RUN, ServerRuns("interrupted", {"run-1": "success"}))
    assert paused.status is RunStatus.INTERRUPTED
    # Its run record deleted through the API: still a pause, not a lost run.
    assert decide(RUNNING, API_RUN, ServerRuns("interrupted", {})).status is RunStatus.INTERRUPTED


@pytest.mark.parametrize("run_status", ["error", "timeout"])
def test_a_run_the_server_saw_fail_is_failed(run_status: str) -> None:
    failed = decide(RUNNING, API_RUN, ServerRuns("error", {"run-1": run_status}))
    assert code(failed) == "run_failed"


def test_a_run_that_ended_here_with_work_left_stopped() -> None:
    stopped = decide(RUNNING, API_RUN, ServerRuns("idle", {"run-1": "success"}))
    assert (code(stopped), stopped.error["retryable"]) == ("run_stopped", True)


def test_a_finished_checkpoint_is_not_held_by_a_stale_busy() -> None:
    """After kill -9 the runtime may come back with the thread ``busy`` and no run."""
    assert decide(SUCCESS, API_RUN, ServerRuns("busy", {})) == SUCCESS
    assert decide(FAILED, API_RUN, ServerRuns("busy", {})) == FAILED
    assert code(decide(SUCCESS, API_RUN, ServerRuns("error", {}))) == "run_failed"


def test_silence_bound_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVOSCIENTIST_RUN_SILENCE_SECONDS", raising=False)
    assert run_silence_seconds() == DEFAULT_RUN_SILENCE_SECONDS
    monkeypatch.setenv("EVOSCIENTIST_RUN_SILENCE_SECONDS", "2.5")
    assert run_silence_seconds() == 2.5
    monkeypatch.setenv("EVOSCIENTIST_RUN_SILENCE_SECONDS", "inf")
    assert run_silence_seconds() == float("inf")
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("EVOSCIENTIST_RUN_SILENCE_SECONDS", bad)
        with pytest.raises(ValueError, match="EVOSCIENTIST_RUN_SILENCE_SECONDS"):
            run_silence_seconds()


@pytest.mark.parametrize(
    ("runs", "writer", "successor"),
    [
        ({"run-1": "success", "run-2": "pending"}, "run-1", "run-2"),
        ({"run-1": "success", "run-2": "running", "run-3": "pending"}, "run-1", "run-2"),
        ({"run-1": "success", "run-2": "pending", "run-3": "pending"}, "run-1", "run-2"),
        ({"run-2": "pending"}, None, "run-2"),  # a TUI turn, then a queued API run
        ({"run-2": "pending"}, "gone", "run-2"),  # the writer's run deleted
        ({"run-1": "running", "run-2": "pending"}, "run-1", None),  # the writer executes
        ({"run-1": "pending"}, "run-1", None),
        ({"run-1": "success"}, "run-1", None),
        ({}, "run-1", None),
    ],
)
def test_the_run_that_took_the_thread_over(
    runs: dict[str, str], writer: str | None, successor: str | None
) -> None:
    assert ServerRuns("busy", runs).successor(writer) == successor


def test_a_run_that_ended_is_judged_alone() -> None:
    """Asked for by its id while a later run is queued: the later run's ``busy`` and
    activity say nothing about it."""
    server = ServerRuns("busy", {"run-1": "success", "run-2": "pending"})
    alone = server.about("run-1")
    assert alone == ServerRuns(None, {"run-1": "success"})
    assert decide(SUCCESS, API_RUN, alone) == SUCCESS
    assert decide(SUCCESS, API_RUN, server).status is RunStatus.RUNNING
    assert server.about("run-2") is server  # still active: the whole view
    assert server.about("unknown") is server


# ``verdict``: the checkpoint's answer and the server's facts in, the route's answer out.

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
QUIET = BOUND * 10  # silent far past the bound


def stored(
    status: RunStatus,
    *,
    run_id: str | None = "run-1",
    silent: float | None = 1.0,
    source: Source = "checkpointer",
    server_busy: bool = False,
) -> FinalAnswer:
    """An answer as a reader gives it: written by a langgraph-api run ``silent`` seconds
    before ``NOW``."""
    updated = None if silent is None else (NOW - timedelta(seconds=silent)).isoformat()
    return FinalAnswer(
        thread_id="thread-1",
        status=status,
        content="" if status is RunStatus.PENDING else "text",
        run_id=run_id,
        updated_at=updated,
        graph_id=None if status is RunStatus.PENDING else "EvoScientist",
        source=source,
        server_busy=server_busy,
    )


HERE = {"runs_here": True}  # the route inside the server running the thread
AWAY = {"runs_here": False, "busy_elsewhere": False}  # no server
FALLBACK = {"runs_here": False}  # a fallback API, not asked yet


def outcome(result: FinalAnswer | Ask) -> str:
    """``ask runs``, ``pending run-2``, ``error run_lost``, ``success``…"""
    if isinstance(result, Ask):
        return f"ask {result.name.lower()}"
    if result.error is not None:
        return f"{result.status.value} {result.error['code']}"
    if result.status is RunStatus.PENDING:
        return f"pending {result.run_id}"
    return result.status.value


VERDICTS: dict[str, tuple[FinalAnswer, str | None, dict[str, Any], str]] = {
    # Inside the server: its status, and its runs when the checkpoint is not enough.
    "finished, thread idle: nothing more asked": (
        stored(RunStatus.SUCCESS),
        None,
        {**HERE, "thread_status": "idle"},
        "success",
    ),
    "finished, thread error": (
        stored(RunStatus.SUCCESS),
        None,
        {**HERE, "thread_status": "error"},
        "error run_failed",
    ),
    "finished, thread busy: the runs are asked for": (
        stored(RunStatus.SUCCESS),
        None,
        {**HERE, "thread_status": "busy"},
        "ask runs",
    ),
    "finished, its run still running here: the server lags": (
        stored(RunStatus.SUCCESS),
        None,
        {**HERE, "thread_status": "busy", "runs": {"run-1": "running"}},
        "running",
    ),
    "unfinished: the runs are asked for": (
        stored(RunStatus.RUNNING),
        None,
        {**HERE, "thread_status": "busy"},
        "ask runs",
    ),
    "unfinished, its run unknown here: lost at once": (
        stored(RunStatus.RUNNING),
        None,
        {**HERE, "thread_status": "busy", "runs": {}},
        "error run_lost",
    ),
    "unfinished, runs unavailable, recent: running": (
        stored(RunStatus.RUNNING),
        None,
        {**HERE, "runs": None},
        "running",
    ),
    "unfinished, runs unavailable, silent: lost, no fallback asked": (
        stored(RunStatus.RUNNING, silent=QUIET),
        None,
        {**HERE, "runs": None},
        "error run_lost",
    ),
    "unfinished, its run cancelled": (
        stored(RunStatus.RUNNING),
        "run-1",
        {**HERE, "thread_status": "interrupted", "runs": {"run-1": "interrupted"}},
        "error run_cancelled",
    ),
    "a later run queued: the latest turn is that run's, empty": (
        stored(RunStatus.SUCCESS),
        None,
        {**HERE, "thread_status": "busy", "runs": {"run-1": "success", "run-2": "pending"}},
        "pending run-2",
    ),
    "asked for a run that ended, a later one queued: judged alone": (
        stored(RunStatus.SUCCESS),
        "run-1",
        {**HERE, "thread_status": "busy", "runs": {"run-1": "success", "run-2": "pending"}},
        "success",
    ),
    "asked for a queued run with nothing written: pending": (
        stored(RunStatus.PENDING, run_id="run-9", silent=None),
        "run-9",
        {**HERE, "thread_status": "busy", "runs": {"run-9": "pending"}},
        "pending run-9",
    ),
    "nothing written, its only run cancelled before it began: cancelled at once": (
        stored(RunStatus.PENDING, run_id=None, silent=None),
        None,
        {**HERE, "thread_status": "idle", "runs": {"run-9": "interrupted"}},
        "error run_cancelled",
    ),
    "nothing written, the latest run failed at once: failed": (
        stored(RunStatus.PENDING, run_id=None, silent=None),
        None,
        {**HERE, "thread_status": "idle", "runs": {"run-8": "interrupted", "run-9": "error"}},
        "error run_failed",
    ),
    "asked for a run cancelled before it wrote anything: cancelled": (
        stored(RunStatus.PENDING, run_id="run-9", silent=None),
        "run-9",
        {**HERE, "thread_status": "idle", "runs": {"run-1": "success", "run-9": "interrupted"}},
        "error run_cancelled",
    ),
    "nothing written, a run still queued: pending": (
        stored(RunStatus.PENDING, run_id=None, silent=None),
        None,
        {**HERE, "thread_status": "busy", "runs": {"run-8": "interrupted", "run-9": "pending"}},
        "pending run-9",
    ),
    "nothing written, no run at all: pending": (
        stored(RunStatus.PENDING, run_id=None, silent=None),
        None,
        {**HERE, "thread_status": "idle", "runs": {}},
        "pending None",
    ),
    "an API answer keeps its own status": (
        stored(RunStatus.SUCCESS, source="api"),
        None,
        {**HERE, "thread_status": "error"},
        "success",
    ),
    # Outside a server: silence, and what a fallback API vouches for.
    "no server, recent": (stored(RunStatus.RUNNING), None, AWAY, "running"),
    "no server, silent": (stored(RunStatus.RUNNING, silent=QUIET), None, AWAY, "error run_lost"),
    "no server, finished": (stored(RunStatus.SUCCESS, silent=QUIET), None, AWAY, "success"),
    "fallback, silent: asked whether it holds the thread busy": (
        stored(RunStatus.RUNNING, silent=QUIET),
        None,
        FALLBACK,
        "ask busy_elsewhere",
    ),
    "fallback holds the thread busy: it vouches": (
        stored(RunStatus.RUNNING, silent=QUIET),
        None,
        {**FALLBACK, "busy_elsewhere": True},
        "running",
    ),
    "fallback does not hold it busy: lost": (
        stored(RunStatus.RUNNING, silent=QUIET),
        None,
        {**FALLBACK, "busy_elsewhere": False},
        "error run_lost",
    ),
    "read through a fallback that said busy: vouched, nothing asked": (
        stored(RunStatus.RUNNING, silent=QUIET, source="api", server_busy=True),
        None,
        FALLBACK,
        "running",
    ),
}


@pytest.mark.parametrize(("answer", "asked", "facts", "expected"), VERDICTS.values(), ids=VERDICTS)
def test_verdict(
    answer: FinalAnswer, asked: str | None, facts: dict[str, Any], expected: str
) -> None:
    evidence = Evidence(now=NOW, **facts)
    assert outcome(verdict(answer, asked, evidence, RULES)) == expected


RULES = Rules(shared_store=False, silence_bound=BOUND)
NOT_WRITTEN = stored(RunStatus.PENDING, run_id="run-9", silent=None)
UNKNOWN_HERE = Evidence(runs_here=True, now=NOW, thread_status="idle", runs={"run-1": "success"})


@pytest.mark.parametrize(
    ("shared", "deleted_here", "expected"),
    [
        (False, False, "run_not_found"),  # this server runs every run of its store
        (True, False, "pending run-9"),  # another server may run it
        (True, True, "run_not_found"),  # this process deleted it
    ],
)
def test_a_run_nothing_knows(shared: bool, deleted_here: bool, expected: str) -> None:
    """Asked for by its id: no checkpoint carries it, the server holds no such run."""
    rules = Rules(shared, BOUND, deleted_here=lambda run_id: deleted_here and run_id == "run-9")
    try:
        got = outcome(verdict(NOT_WRITTEN, "run-9", UNKNOWN_HERE, rules))
    except RunNotFound as exc:
        assert exc.args == ("run-9",)
        got = "run_not_found"
    assert got == expected


@pytest.mark.parametrize(
    ("updated_at", "silent"),
    [
        (None, None),
        ("not a time", None),
        ((NOW - timedelta(seconds=5)).isoformat(), 5.0),
        ((NOW - timedelta(seconds=5)).replace(tzinfo=None).isoformat(), 5.0),  # naive: UTC
        ((NOW + timedelta(seconds=5)).isoformat(), 0.0),  # a clock ahead: never negative
    ],
)
def test_silence_is_measured_from_the_checkpoint(updated_at: str | None, silent: float) -> None:
    assert silent_for(updated_at, NOW) == silent
