"""What a langgraph API must answer before the fallback believes it: the fallback may point
at anything (a proxy's HTML page with a 200, JSON of the wrong shape, a huge list), so
junk is refused (``ApiInvalid``, a retryable 503) instead of crashing the route or being
passed on as an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evoscientist_final_answer.store.errors import ApiInvalid

# No real thread state holds more items in one list (messages, tasks, interrupts).
MAX_ITEMS = 100_000
THREAD_STATUSES = frozenset({"idle", "busy", "interrupted", "error"})


def _fail(what: str, value: Any) -> ApiInvalid:
    shown = type(value).__name__
    if isinstance(value, list | tuple | str | bytes | dict):
        shown += f" of {len(value)}"
    return ApiInvalid(f"the langgraph API answered {what} as {shown}")


def _mapping(what: str, value: Any, *, optional: bool = False) -> Mapping[str, Any]:
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(what, value)
    return value


def _items(what: str, value: Any, *, optional: bool = True) -> list[Any]:
    if value is None and optional:
        return []
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        raise _fail(what, value)
    return value


def _text(what: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise _fail(what, value)


def thread_record(value: Any) -> dict[str, Any]:
    thread = _mapping("a thread", value)
    status = thread.get("status")
    if status is not None and status not in THREAD_STATUSES:
        raise _fail("a thread status", status)
    return dict(thread)


def thread_statuses(value: Any, asked: list[str]) -> dict[str, str]:
    """A search selecting ``thread_id`` and ``status``: one row per thread asked."""
    rows = _items("a thread search", value, optional=False)
    if len(rows) > len(asked):
        raise _fail("a thread search", value)
    found: dict[str, str] = {}
    for row in rows:
        thread = thread_record(row)
        thread_id, status = thread.get("thread_id"), thread.get("status")
        if not isinstance(thread_id, str):
            raise _fail("a thread id", thread_id)
        if status is not None:
            found[thread_id] = status
    return found


def thread_state(value: Any) -> Mapping[str, Any]:
    """A ``ThreadState`` (``get_state``, or one entry of ``get_history``)."""
    state = _mapping("a thread state", value)
    values = state.get("values")
    if isinstance(values, Mapping):
        messages = _items("the messages", values.get("messages"))
        for message in messages:
            if not isinstance(message, Mapping | str):
                raise _fail("a message", message)
    elif values is not None and not isinstance(values, list):
        raise _fail("the state's values", values)
    for node in _items("next", state.get("next")):
        _text("a next node", node)
    for task in _items("the tasks", state.get("tasks")):
        task = _mapping("a task", task)
        _interrupts(task.get("interrupts"))
        error = task.get("error")
        if error is not None and not isinstance(error, str | Mapping):
            raise _fail("a task error", error)
    _interrupts(state.get("interrupts"))
    metadata = _mapping("the metadata", state.get("metadata"), optional=True)
    for key in ("run_id", "agent_name", "langgraph_auth_user_id"):
        _text(f"metadata.{key}", metadata.get(key))
    checkpoint = _mapping("the checkpoint", state.get("checkpoint"), optional=True)
    _text("a checkpoint id", checkpoint.get("checkpoint_id"))
    _text("created_at", state.get("created_at"))
    return state


def history(value: Any, limit: int) -> list[Any]:
    states = _items("a history", value, optional=False)
    if len(states) > limit:
        raise _fail("a history", value)
    return [thread_state(state) for state in states]


def _interrupts(value: Any) -> None:
    for entry in _items("the interrupts", value):
        _mapping("an interrupt", entry)
