"""``answer.run_liveness.judge``: every signal about an unfinished run, and where they
conflict. Pure: the states and views are what the readers and the server produce."""

from __future__ import annotations

import pytest

from evoscientist_final_answer.answer.run_liveness import ServerRuns, Writer, judge
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
