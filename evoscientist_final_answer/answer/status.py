"""Where a run stands, from its newest root checkpoint and, inside the server, the thread."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

ERROR_CHANNEL = "__error__"
INTERRUPT_CHANNEL = "__interrupt__"
RESUME_CHANNEL = "__resume__"
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
_NO_RESUME = object()
START_CHANNEL = "__start__"
TASKS_CHANNEL = "__pregel_tasks"
BRANCH_PREFIX = "branch:to:"
JOIN_PREFIX = "join:"

MAX_ERROR_MESSAGE = 2_000
# langgraph stores a task's exception in its ``__error__`` write as its ``repr``.
_EXCEPTION_REPR = re.compile(r"^([A-Za-z_][\w.]*)\((.*)\)$", re.DOTALL)
# A task cancelled mid-step writes one of these: ``CancelledError`` when langgraph
# cancels it (a sibling task failed, or the run was cancelled while its writes were
# still being saved), ``NodeCancelledError`` when the node's own awaited call (a model
# call) was cancelled under it; ``AbortError`` on LangGraph's JavaScript server.
CANCELLED_ERRORS = frozenset(
    {
        "AbortError",
        "CancelledError",
        "asyncio.CancelledError",
        "NodeCancelledError",
        "concurrent.futures._base.CancelledError",
    }
)


class RunStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCESS = "success"
    ERROR = "error"
    INTERRUPTED = "interrupted"

    @property
    def complete(self) -> bool:
        """The run is no longer executing; a polling client may stop."""
        return self in (RunStatus.SUCCESS, RunStatus.ERROR, RunStatus.INTERRUPTED)


@dataclass(frozen=True)
class RunState:
    status: RunStatus
    error: dict[str, Any] | None = None
    interrupts: list[dict[str, Any]] = field(default_factory=list)


def _released_by_join(name: str, value: Any) -> str | None:
    """The node a ``join:a+b:X`` barrier (``add_edge([a, b], X)``) has released, if any.

    The stored value is the set of sources seen so far, or ``(seen, finished)`` for a
    deferred target. ``seen`` only ever holds names from the channel name, so it is
    complete exactly when its names fill that part of it (names may contain ``+``).
    """
    sources, sep, target = name.removeprefix(JOIN_PREFIX).rpartition(":")
    if not sep:
        return None
    seen, finished = value, True
    if isinstance(value, list | tuple) and len(value) == 2 and isinstance(value[1], bool):
        seen, finished = value
    if not finished or not isinstance(seen, set | frozenset | list | tuple) or not seen:
        return None
    return target if len("+".join(map(str, seen))) == len(sources) else None


def next_nodes(channel_values: Mapping[str, Any]) -> tuple[str, ...]:
    """The nodes a checkpoint has yet to run, from the checkpoint alone, with no graph.

    langgraph ≥ 1.0 keeps a pending node ``X`` as a ``branch:to:X`` value in
    ``channel_values``; graph input waits in ``__start__``, ``Send`` packets in
    ``__pregel_tasks``, and a node behind ``add_edge([a, b], X)`` on a full
    ``join:a+b:X`` barrier."""
    pending: list[str] = []
    for name, value in channel_values.items():
        if name.startswith(BRANCH_PREFIX):
            pending.append(name.removeprefix(BRANCH_PREFIX))
        elif name.startswith(JOIN_PREFIX):
            target = _released_by_join(name, value)
            if target is not None and target not in pending:
                pending.append(target)
        elif name == START_CHANNEL or (name == TASKS_CHANNEL and value):
            pending.append(name)
    return tuple(pending)


def run_error(code: str, message: str, *, retryable: bool) -> dict[str, Any]:
    return {"code": code, "message": message[:MAX_ERROR_MESSAGE], "retryable": retryable}


def describe_exception(value: Any) -> tuple[str | None, str]:
    """``(type name, "Type: text")`` of an ``__error__`` write: langgraph keeps the
    exception's ``repr`` (``RuntimeError('kaboom')``), or the exception itself; LangGraph's
    JavaScript server keeps the JSON of ``{"message", "name"}`` (read through its API by
    a sidecar). As clients/js/src/answer/status.js's ``describeException`` reads them."""
    if isinstance(value, BaseException):
        name, text = type(value).__name__, str(value)
        return name, f"{name}: {text}" if text else name
    if isinstance(value, Mapping):
        return _described_object(value)
    raw = str(value)
    if raw.startswith("{"):
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return _described_object(parsed)
    match = _EXCEPTION_REPR.match(raw.strip())
    if match is None:
        return None, raw
    name, args = match.groups()
    try:
        parsed = ast.literal_eval(f"({args},)") if args.strip() else ()
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return name, raw
    if not parsed:
        return name, name
    if len(parsed) == 1:
        return name, f"{name}: {parsed[0]}"
    return name, f"{name}: {', '.join(map(str, parsed))}"


def _described_object(value: Mapping[str, Any]) -> tuple[str | None, str]:
    name = value.get("name") if isinstance(value.get("name"), str) else None
    if name is None and isinstance(value.get("type"), str):
        name = value["type"]
    message = value.get("message")
    text = message if isinstance(message, str) else json.dumps(value, default=str)
    if name:
        return name, f"{name}: {text}" if text else name
    return None, text


def error_from_writes(values: Iterable[Any]) -> dict[str, Any]:
    """The ``error`` of a run whose tasks wrote ``values`` to ``__error__``: the first
    real failure (the tasks langgraph cancelled because of it write a
    ``CancelledError`` of their own), else a cancellation."""
    described = [describe_exception(value) for value in values]
    for name, text in described:
        if name not in CANCELLED_ERRORS:
            return run_error("run_failed", text, retryable=False)
    name = described[0][0] if described else None
    return run_error("run_cancelled", f"the run was cancelled mid-step ({name})", retryable=False)


def interrupt_entry(value: Any) -> dict[str, Any]:
    """``{id, value}`` of a langgraph ``Interrupt`` or of its JSON form."""
    if isinstance(value, Mapping):
        return {"id": value.get("id"), "value": value.get("value")}
    return {"id": getattr(value, "id", None), "value": getattr(value, "value", value)}


def _resumed(
    task_id: str, interrupts: list[dict[str, Any]], pending_resume: Any, consumed: Any
) -> bool:
    """Whether a ``Command(resume=…)`` has answered this task's interrupt.

    A resume is stored as a write of the null task; once the task has consumed it, it
    also sits in the task's own resume list — and stays in the null task's row until the
    next resume overwrites it. A resume keyed by interrupt ids answers those ids; a plain
    value is new when it differs from the last one the task consumed (two identical
    plain answers in a row read as not yet resumed: the checkpoint cannot tell them apart).
    """
    if pending_resume is _NO_RESUME:
        return False
    ids = [entry["id"] for entry in interrupts if entry.get("id")]
    if isinstance(pending_resume, Mapping) and ids and all(i in pending_resume for i in ids):
        return True
    if not isinstance(consumed, list) or not consumed:
        return True
    return consumed[-1] != pending_resume


def state_from_checkpoint(
    channel_values: Mapping[str, Any], pending_writes: Iterable[tuple[str, str, Any]]
) -> RunState:
    """Status of the run that wrote this checkpoint, from the checkpoint alone.

    ``pending_writes`` are ``(task_id, channel, value)`` stored against the checkpoint.
    An interrupt that a later ``Command(resume=…)`` has answered no longer counts: its
    node is running again, on the same checkpoint, until it writes the next one.
    """
    errors: list[Any] = []
    interrupts_by_task: dict[str, list[dict[str, Any]]] = {}
    resumes_by_task: dict[str, Any] = {}
    pending_resume: Any = _NO_RESUME
    for task_id, channel, value in pending_writes:
        if channel == ERROR_CHANNEL:
            errors.append(value)
        elif channel == INTERRUPT_CHANNEL:
            values = value if isinstance(value, list | tuple) else [value]
            interrupts_by_task.setdefault(task_id, []).extend(interrupt_entry(v) for v in values)
        elif channel == RESUME_CHANNEL:
            if task_id == NULL_TASK_ID:
                pending_resume = value
            else:
                resumes_by_task[task_id] = value
    if errors:
        return RunState(RunStatus.ERROR, error=error_from_writes(errors))
    waiting = [
        entry
        for task_id, entries in interrupts_by_task.items()
        if not _resumed(task_id, entries, pending_resume, resumes_by_task.get(task_id))
        for entry in entries
    ]
    if waiting:
        return RunState(RunStatus.INTERRUPTED, interrupts=waiting)
    if interrupts_by_task or next_nodes(channel_values):
        return RunState(RunStatus.RUNNING)
    return RunState(RunStatus.SUCCESS)


def overlay_thread_status(state: RunState, thread_status: str | None) -> RunState:
    """Let the server's own view of the thread win where it knows better.

    ``busy`` means a run is executing (or queued) even when the newest checkpoint looks
    finished; ``idle`` with unfinished work means the run stopped without finishing
    (cancelled, or the server restarted), which must not read as ``success``.
    """
    if thread_status == "busy":
        return RunState(RunStatus.RUNNING) if state.status.complete else state
    if thread_status == "error" and state.status is not RunStatus.ERROR:
        return RunState(
            RunStatus.ERROR,
            error=run_error("run_failed", "the run failed; see the server log", retryable=False),
        )
    if thread_status == "interrupted" and state.status is RunStatus.RUNNING:
        return RunState(RunStatus.INTERRUPTED, interrupts=state.interrupts)
    if thread_status == "idle" and state.status is RunStatus.RUNNING:
        return RunState(
            RunStatus.ERROR,
            error=run_error(
                "run_stopped",
                "the run stopped before finishing (cancelled, or the server restarted)",
                retryable=True,
            ),
        )
    return state
