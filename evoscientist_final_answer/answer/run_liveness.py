"""Is the run behind an unfinished checkpoint still executing? A pure decision, no I/O:
``verdict`` takes the checkpoint's answer and what is known of the thread (``Evidence``),
and names a fact it still needs (``Ask``) instead of guessing. What it weighs (the
writer's stamps, the server's runs, the thread's silence): docs/final-answer.md, *Status*.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import Enum
from typing import Final

from evoscientist_final_answer.answer.result import (
    FinalAnswer,
    pending_answer,
    run_state,
    with_run_state,
    with_thread_status,
)
from evoscientist_final_answer.answer.status import (
    RunState,
    RunStatus,
    overlay_thread_status,
    run_error,
)

ACTIVE_RUN_STATUSES = frozenset({"pending", "running"})

RUN_LOST_MESSAGE = (
    "the run stopped without finishing: nothing is executing it any more "
    "(its server or process was killed or restarted)"
)
RUN_CANCELLED_MESSAGE = "the run was cancelled (POST /threads/{thread_id}/runs/{run_id}/cancel)"
UNWRITTEN_FAILURE_MESSAGE = "the run failed before it wrote a checkpoint; see the server log"


class RunNotFound(Exception):
    """The server does not know this run on the thread, and no checkpoint carries it."""


@dataclass(frozen=True)
class Writer:
    """What the answering checkpoint says of the run that wrote it."""

    run_id: str | None
    graph_id: str | None
    silent_for: float | None  # seconds since the checkpoint was written; None: unknown

    @property
    def api_run(self) -> bool:
        """Written by a langgraph-api run (the TUI's own runs stamp neither)."""
        return self.run_id is not None and self.graph_id is not None


@dataclass(frozen=True)
class ServerRuns:
    """What this server knows of a thread: its status and its runs' statuses."""

    thread_status: str | None
    runs: Mapping[str, str] = field(default_factory=dict)  # run_id → status

    @property
    def active(self) -> bool:
        """A run of the thread is queued or executing here."""
        return any(status in ACTIVE_RUN_STATUSES for status in self.runs.values())

    @property
    def latest(self) -> str | None:
        """The thread's newest run (``runs`` are oldest first)."""
        return next(reversed(self.runs), None)

    def successor(self, writer_run_id: str | None) -> str | None:
        """The run that has taken the thread over from the checkpoint's writer, before
        writing anything: an active run here while the writer's own run is not (queued
        behind it, or just started). The executing one first, else the oldest queued."""
        if writer_run_id is not None and self.runs.get(writer_run_id) in ACTIVE_RUN_STATUSES:
            return None
        for wanted in ("running", "pending"):
            for run_id, status in self.runs.items():
                if status == wanted and run_id != writer_run_id:
                    return run_id
        return None

    def about(self, run_id: str) -> ServerRuns:
        """What this server knows of one run that has ended here, alone: another run
        queued or executing on the thread (its ``busy``) says nothing about it."""
        status = self.runs.get(run_id)
        if status is None or status in ACTIVE_RUN_STATUSES:
            return self
        thread_status = None if self.thread_status == "busy" else self.thread_status
        return ServerRuns(thread_status, {run_id: status})


def ended_unwritten(status: str | None) -> RunState | None:
    """The end of a run this server holds as ``status`` that wrote no checkpoint (None:
    it has not ended): the server's word is all there is of it."""
    if status == "interrupted":
        return run_cancelled()
    if status in ("error", "timeout"):
        return RunState(
            RunStatus.ERROR,
            error=run_error("run_failed", UNWRITTEN_FAILURE_MESSAGE, retryable=False),
        )
    if status == "success":
        return RunState(RunStatus.SUCCESS)
    return None


def run_lost() -> RunState:
    return RunState(RunStatus.ERROR, error=run_error("run_lost", RUN_LOST_MESSAGE, retryable=False))


def run_cancelled() -> RunState:
    return RunState(
        RunStatus.ERROR, error=run_error("run_cancelled", RUN_CANCELLED_MESSAGE, retryable=False)
    )


def by_silence(state: RunState, writer: Writer, silence_bound: float) -> RunState:
    """No one can vouch for the run: lost once it has been silent past the bound."""
    if writer.silent_for is not None and writer.silent_for > silence_bound:
        return run_lost()
    return state


def judge(
    state: RunState,
    writer: Writer,
    server: ServerRuns | None,
    *,
    shared_store: bool,
    silence_bound: float,
) -> RunState:
    """``state`` (from the checkpoint alone) as the evidence about its run has it.

    ``server``: this server's view, None outside a server (or when it could not be
    asked). ``shared_store``: other servers write the same store (PostgreSQL), so a run
    this server does not know may be alive on another one.
    """
    if server is None:
        return by_silence(state, writer, silence_bound) if _unfinished(state) else state
    if server.active:
        # A run queued or executing here: the checkpoint may lag it, or a new run takes
        # the thread over.
        return RunState(RunStatus.RUNNING) if state.status.complete else state
    if not _unfinished(state):
        # Finished by the checkpoint; a stale ``busy`` (a crash mid-run) must not hold it.
        thread_status = None if server.thread_status == "busy" else server.thread_status
        return overlay_thread_status(state, thread_status)
    run_status = server.runs.get(writer.run_id) if writer.run_id is not None else None
    if run_status == "interrupted":
        return run_cancelled()
    if run_status in ("error", "timeout"):
        return overlay_thread_status(state, "error")
    if run_status is not None:
        # Ended here with work left: a static breakpoint (``interrupt_before``) leaves
        # the thread ``interrupted``; anything else stopped the run early.
        interrupted = server.thread_status == "interrupted"
        return overlay_thread_status(state, "interrupted" if interrupted else "idle")
    if server.thread_status == "interrupted":
        # Paused at a breakpoint whose run record is gone (deleted through the API):
        # the thread waits for input, nothing is lost.
        return overlay_thread_status(state, "interrupted")
    if writer.api_run and not shared_store:
        return run_lost()  # this server is the only one running this store's runs
    return by_silence(state, writer, silence_bound)


def _unfinished(state: RunState) -> bool:
    return state.status in (RunStatus.RUNNING, RunStatus.PENDING)


class Unknown(Enum):
    """A fact not gathered yet (``Evidence``)."""

    UNKNOWN = "unknown"


UNKNOWN: Final = Unknown.UNKNOWN


class Ask(Enum):
    """The fact a verdict needs before it can be given."""

    RUNS = "the server's runs of the thread"
    BUSY_ELSEWHERE = "whether the fallback API holds the thread busy"


@dataclass(frozen=True)
class Evidence:
    """What is known, for one read, of the thread beside its checkpoint.

    ``runs_here``: the facts are those of the server executing the thread's runs (the
    route runs inside it); otherwise there is no server, or only a fallback API that
    can vouch for a run it holds ``busy``. ``thread_status``: the server's status of the
    thread, read before the checkpoint. ``runs``: this server's runs of the thread, run
    id → status (None: it could not be asked). ``busy_elsewhere``: the fallback API
    holds the thread ``busy``. ``now``: when the verdict is given (silence is measured
    to it)."""

    runs_here: bool
    now: datetime
    thread_status: str | None = None
    runs: Mapping[str, str] | Unknown | None = UNKNOWN
    busy_elsewhere: bool | Unknown = UNKNOWN


@dataclass(frozen=True)
class Rules:
    """What the store and settings say about judging its runs.

    ``shared_store``: other servers write the same store (PostgreSQL), so a run this
    server does not know may be alive on another one. ``deleted_here``: whether this
    process deleted a run (asked only on a shared store)."""

    shared_store: bool
    silence_bound: float
    deleted_here: Callable[[str], bool] = lambda run_id: False


def verdict(
    answer: FinalAnswer, asked_run_id: str | None, evidence: Evidence, rules: Rules
) -> FinalAnswer | Ask:
    """``answer`` (from its checkpoint alone) as what is known of its run has it; or
    the fact still needed. Raises ``RunNotFound`` for a run that nothing knows.

    ``asked_run_id``: the ``run_id`` the caller asked about (None: the thread's latest
    turn). An answer read through the API carries the server's status of its own (its
    ``threads.get``): the status read before it is not applied again."""
    here = evidence.runs_here
    thread_status = None if answer.source == "api" else evidence.thread_status
    if here and answer.complete and thread_status != "busy":
        return with_thread_status(answer, thread_status)  # nothing more to ask
    if not here and answer.server_busy:
        # Read through a fallback API that holds the run as executing: however long it
        # has been silent, that server vouches for it.
        return answer
    server: ServerRuns | None = None
    if here:
        if evidence.runs is UNKNOWN:
            return Ask.RUNS
        if evidence.runs is not None:
            server = ServerRuns(thread_status, evidence.runs)
    if server is not None and asked_run_id is None:
        successor = server.successor(answer.run_id)
        if successor is not None:
            # The thread's latest turn is a run that has written nothing yet: its answer
            # is empty, never the previous turn's.
            return pending_answer(answer.thread_id, successor, answer.source)
    if server is not None and asked_run_id is not None and asked_run_id == answer.run_id:
        server = server.about(asked_run_id)  # asked for a run that ended: a later one's busy
    if (
        server is not None
        and answer.status is RunStatus.PENDING
        and asked_run_id is not None
        and asked_run_id not in server.runs
        and (not rules.shared_store or rules.deleted_here(asked_run_id))
    ):
        raise RunNotFound(asked_run_id)
    if server is not None and answer.status is RunStatus.PENDING and not server.active:
        # Nothing written of the run asked for, or of any run of the thread: a run that
        # ended before its first checkpoint (cancelled before it began) ends so here.
        ended_run = asked_run_id if asked_run_id is not None else server.latest
        if answer.checkpoint_id is None or asked_run_id is not None:
            ended = ended_unwritten(server.runs.get(ended_run)) if ended_run else None
            if ended is not None:
                return with_run_state(replace(answer, run_id=ended_run), ended)
    writer = Writer(answer.run_id, answer.graph_id, silent_for(answer.updated_at, evidence.now))
    state = judge(
        run_state(answer),
        writer,
        server,
        shared_store=rules.shared_store,
        silence_bound=rules.silence_bound,
    )
    if _lost(state) and not here:
        # Silent past the bound, but the fallback API (the server running it) may hold
        # the thread busy: then it vouches for the run.
        if evidence.busy_elsewhere is UNKNOWN:
            return Ask.BUSY_ELSEWHERE
        if evidence.busy_elsewhere:
            return answer
    return with_run_state(answer, state)


def silent_for(updated_at: str | None, now: datetime) -> float | None:
    """Seconds from a checkpoint's ``ts`` (writers stamp UTC) to ``now``."""
    if updated_at is None:
        return None
    try:
        written = datetime.fromisoformat(updated_at)
    except ValueError:
        return None
    if written.tzinfo is None:
        written = written.replace(tzinfo=UTC)
    return max(0.0, (now - written).total_seconds())


def _lost(state: RunState) -> bool:
    return state.error is not None and state.error.get("code") == "run_lost"
