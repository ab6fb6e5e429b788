"""The final-answer record: what every reader produces and the route serialises."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from evoscientist_final_answer.answer.extract import NO_ANSWER, final_answer_from_end
from evoscientist_final_answer.answer.status import (
    START_CHANNEL,
    RunState,
    RunStatus,
    overlay_thread_status,
    state_from_checkpoint,
)

Source = Literal["checkpointer", "api"]


@dataclass(frozen=True)
class FinalAnswer:
    thread_id: str
    status: RunStatus
    content: str = ""
    reasoning: str = ""
    run_id: str | None = None
    checkpoint_id: str | None = None
    message_id: str | None = None
    updated_at: str | None = None
    source: Source = "checkpointer"
    error: dict[str, Any] | None = None
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    # Where the checkpoint came from, for the status checks; not part of the body.
    graph_id: str | None = field(default=None, compare=False)
    origin: str | None = field(default=None, compare=False)  # metadata.source
    parent_checkpoint_id: str | None = field(default=None, compare=False)
    # A server said the thread is ``busy`` when it was read: it vouches for the run.
    server_busy: bool = field(default=False, compare=False)

    @property
    def complete(self) -> bool:
        return self.status.complete

    @property
    def completed_at(self) -> str | None:
        return self.updated_at if self.complete else None

    def to_json(self, *, include_reasoning: bool = False) -> dict[str, Any]:
        """The documented body: the seed's three fields first, then the additions."""
        body: dict[str, Any] = {
            "content": self.content,
            "completed_at": self.completed_at,
            "complete": self.complete,
            "status": self.status.value,
            "thread_id": self.thread_id,
            "run_id": self.run_id,
            "checkpoint_id": self.checkpoint_id,
            "message_id": self.message_id,
            "updated_at": self.updated_at,
            "source": self.source,
            "error": self.error,
            "interrupts": self.interrupts,
        }
        if include_reasoning:
            body["reasoning"] = self.reasoning
        return body


def iso_time(value: Any) -> str | None:
    """Checkpoint ``ts`` values are ISO-8601 already; normalise to one spelling."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        return text


def answer_from_checkpoint(
    *,
    thread_id: str,
    newest_first: Iterable[BaseMessage],
    channel_values: Mapping[str, Any],
    pending_writes: Iterable[tuple[str, str, Any]],
    metadata: Mapping[str, Any],
    checkpoint_id: str | None,
    ts: Any,
    source: Source,
    thread_status: str | None = None,
    parent_checkpoint_id: str | None = None,
) -> FinalAnswer:
    """Assemble the record for one root checkpoint.

    ``newest_first`` are its messages, newest first (read only as far as needed).
    ``thread_status`` is the server's view of the thread (``idle``/``busy``/…) where
    known; it takes precedence over what the checkpoint alone suggests.
    """
    state = overlay_thread_status(
        state_from_checkpoint(channel_values, pending_writes), thread_status
    )
    # Input still waiting in __start__ has not reached the messages channel: the
    # messages there end with the previous turn, whose answer must not be shown.
    answer = NO_ANSWER if START_CHANNEL in channel_values else final_answer_from_end(newest_first)
    run_id = metadata.get("run_id")
    graph_id = metadata.get("graph_id")
    origin = metadata.get("source")
    return FinalAnswer(
        thread_id=thread_id,
        status=state.status,
        content=answer.content,
        reasoning=answer.reasoning,
        run_id=str(run_id) if run_id is not None else None,
        checkpoint_id=checkpoint_id,
        message_id=answer.message_id,
        updated_at=iso_time(ts),
        source=source,
        error=state.error,
        interrupts=state.interrupts,
        graph_id=str(graph_id) if graph_id is not None else None,
        origin=str(origin) if origin is not None else None,
        parent_checkpoint_id=parent_checkpoint_id,
        server_busy=thread_status == "busy",
    )


def with_run_state(answer: FinalAnswer, state: RunState) -> FinalAnswer:
    """``answer`` with its status, error and interrupts replaced by ``state``'s."""
    if (state.status, state.error, state.interrupts) == (
        answer.status,
        answer.error,
        answer.interrupts,
    ):
        return answer
    return replace(answer, status=state.status, error=state.error, interrupts=state.interrupts)


def run_state(answer: FinalAnswer) -> RunState:
    return RunState(answer.status, error=answer.error, interrupts=answer.interrupts)


def with_thread_status(answer: FinalAnswer, thread_status: str | None) -> FinalAnswer:
    """``answer`` (derived from its checkpoint alone) as the server's thread status has it."""
    if thread_status is None:
        return answer
    state = overlay_thread_status(run_state(answer), thread_status)
    if state.status is answer.status and state.error == answer.error:
        return answer
    return with_run_state(answer, state)


def pending_answer(thread_id: str, run_id: str | None, source: Source) -> FinalAnswer:
    """A run asked for whose first checkpoint is not written yet."""
    return FinalAnswer(thread_id=thread_id, status=RunStatus.PENDING, run_id=run_id, source=source)
