"""The same answer from a thread state in the langgraph API's JSON shape: one function for
the route's API fallback and the client's F2a path, so both agree with the checkpoint read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evoscientist_final_answer.answer.extract import coerce_messages
from evoscientist_final_answer.answer.result import FinalAnswer, Source, answer_from_checkpoint
from evoscientist_final_answer.answer.status import (
    BRANCH_PREFIX,
    ERROR_CHANNEL,
    INTERRUPT_CHANNEL,
    START_CHANNEL,
)


def _state_as_checkpoint(state: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple]]:
    """Re-express ``next`` and ``tasks`` as the channel values and writes they stand for."""
    channel_values: dict[str, Any] = {}
    for node in state.get("next") or ():
        name = START_CHANNEL if node == START_CHANNEL else BRANCH_PREFIX + str(node)
        channel_values[name] = None
    writes: list[tuple] = []
    for task in state.get("tasks") or ():
        if task.get("error"):
            writes.append((task.get("id"), ERROR_CHANNEL, task["error"]))
        if task.get("interrupts"):
            writes.append((task.get("id"), INTERRUPT_CHANNEL, list(task["interrupts"])))
    if not any(w[1] == INTERRUPT_CHANNEL for w in writes) and state.get("interrupts"):
        writes.append((None, INTERRUPT_CHANNEL, list(state["interrupts"])))
    return channel_values, writes


def answer_from_state(
    thread_id: str,
    state: Mapping[str, Any],
    *,
    thread_status: str | None = None,
    source: Source = "api",
) -> FinalAnswer:
    values = state.get("values") or {}
    raw_messages = values.get("messages", []) if isinstance(values, Mapping) else []
    channel_values, writes = _state_as_checkpoint(state)
    checkpoint = state.get("checkpoint") or {}
    return answer_from_checkpoint(
        thread_id=thread_id,
        newest_first=reversed(
            coerce_messages(raw_messages if isinstance(raw_messages, list) else [])
        ),
        channel_values=channel_values,
        pending_writes=writes,
        metadata=state.get("metadata") or {},
        checkpoint_id=checkpoint.get("checkpoint_id"),
        ts=state.get("created_at"),
        source=source,
        thread_status=thread_status,
    )
