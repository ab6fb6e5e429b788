"""The events a thread stream did not show, made from the route's answer in the shapes the
server sends them, so a consumer that builds its answer from the stream builds all of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evoscientist_final_answer.recovery.thread.follow import RunFollow, ShownMessage

EVENT_ID_PREFIX = "final-answer"


class RunLost(RuntimeError):
    """The server no longer runs the run and never finished it (a restart lost it)."""


class AnswerDiverged(RuntimeError):
    """What the stream showed is not a beginning of the run's answer (the server ran
    the run again and it answered otherwise): appending cannot make the shown text the
    answer."""


# The route's error codes and the lifecycle phase the server ends such a run with
# (``to_lifecycle_status`` of the run's status: a cancelled run is ``interrupted``).
_PHASE_OF_ERROR = {"run_cancelled": "interrupted", "run_stopped": "completed"}


def tail_events(follow: RunFollow, answer: Mapping[str, Any], now_ms: int) -> list[dict[str, Any]]:
    """The events that finish ``follow``'s run as ``answer`` (a complete final answer)
    says it ended. Raises ``RunLost`` or ``AnswerDiverged`` where no events can."""
    error = answer.get("error") or {}
    if answer.get("status") == "error" and error.get("code") == "run_lost":
        raise RunLost(
            f"run {answer.get('run_id') or follow.run_id} of thread {answer.get('thread_id')} "
            f"was lost: {error.get('message') or 'the server no longer runs it'}"
        )
    made = _Events(follow.run_id, now_ms)
    made.text(follow, str(answer.get("content") or ""), answer.get("message_id"))
    status = answer.get("status")
    if status == "interrupted":
        for interrupt in answer.get("interrupts") or []:
            made.add(
                "input.requested",
                {"interrupt_id": interrupt.get("id"), "value": interrupt.get("value")},
            )
        made.lifecycle("interrupted")
    elif status == "error":
        code = error.get("code")
        phase = _PHASE_OF_ERROR.get(code, "failed")
        made.lifecycle(phase, error=error.get("message") if phase == "failed" else None)
    else:
        made.lifecycle("completed")
    return made.events


def _answered_message(
    follow: RunFollow, content: str, message_id: str | None
) -> ShownMessage | None:
    """The shown message the answer continues: its own, else the last one shown if the
    answer begins with it (a run the server ran again re-types it under a new id)."""
    if message_id and message_id in follow.messages:
        return follow.messages[message_id]
    last = follow.last_shown
    if last is not None and not last.finished and last.text and content.startswith(last.text):
        return last
    return None


class _Events:
    def __init__(self, run_id: str | None, now_ms: int) -> None:
        self.run_id = run_id
        self.now_ms = now_ms
        self.events: list[dict[str, Any]] = []

    def add(self, method: str, data: dict[str, Any]) -> None:
        self.events.append(
            {
                "type": "event",
                "event_id": f"{EVENT_ID_PREFIX}:{self.run_id}:{len(self.events)}",
                "method": method,
                "params": {"namespace": [], "timestamp": self.now_ms, "data": data},
            }
        )

    def lifecycle(self, phase: str, error: str | None = None) -> None:
        data: dict[str, Any] = {"event": phase}
        if error:
            data["error"] = error
        self.add("lifecycle", data)

    def text(self, follow: RunFollow, content: str, message_id: str | None) -> None:
        shown = _answered_message(follow, content, message_id)
        if shown is None:
            if content:
                self.add("messages", {"event": "message-start", "role": "ai", "id": message_id})
                self._block(0, "", content)
                self.add("messages", {"event": "message-finish"})
            return
        if not content.startswith(shown.text):
            raise AnswerDiverged(
                f"run {self.run_id} answered {content!r}, which does not begin with what "
                f"its stream showed ({shown.text!r})"
            )
        rest = content[len(shown.text) :]
        if shown.finished:
            if rest:
                raise AnswerDiverged(
                    f"run {self.run_id}'s message {shown.id} finished at {shown.text!r}, "
                    f"short of its answer {content!r}"
                )
            return
        if shown.text_block is None:
            self._block(shown.blocks, "", rest)
        elif rest:
            self._delta(shown.text_block, rest)
            self._finish(shown.text_block, content)
        else:
            self._finish(shown.text_block, content)
        self.add("messages", {"event": "message-finish"})

    def _block(self, index: int, start: str, text: str) -> None:
        self.add(
            "messages",
            {
                "event": "content-block-start",
                "index": index,
                "content": {"type": "text", "text": start},
            },
        )
        if text:
            self._delta(index, text)
        self._finish(index, start + text)

    def _delta(self, index: int, text: str) -> None:
        self.add(
            "messages",
            {
                "event": "content-block-delta",
                "index": index,
                "delta": {"type": "text-delta", "text": text},
            },
        )

    def _finish(self, index: int, text: str) -> None:
        self.add(
            "messages",
            {
                "event": "content-block-finish",
                "index": index,
                "content": {"type": "text", "text": text},
            },
        )
