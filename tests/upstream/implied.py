"""What upstream's own ``GET /threads/{id}/state`` (and ``GET /threads/{id}``) imply the
final answer is, read from their JSON here, independently of the route's code: the last
AI message after the last human message whose text is not empty, its text blocks joined
(reasoning left out), and the run's status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Implied:
    content: str
    message_id: str | None
    status: str


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        block.get("text", "")
        for block in content or []
        if isinstance(block, dict) and block.get("type") == "text"
    )


def implied_answer(state: dict[str, Any], thread: dict[str, Any]) -> Implied:
    messages = state["values"].get("messages") or []
    start = 0
    for index, message in enumerate(messages):
        if message.get("type") == "human" and text_of(message).strip():
            start = index + 1
    answer: dict[str, Any] | None = None
    for message in messages[start:]:
        if message.get("type") == "ai" and text_of(message).strip():
            answer = message
    interrupts = [i for task in state.get("tasks") or [] for i in task.get("interrupts") or []]
    if thread["status"] == "busy":
        status = "running"
    elif thread["status"] == "error" or any(t.get("error") for t in state.get("tasks") or []):
        status = "error"
    elif interrupts:
        status = "interrupted"
    elif not state.get("next"):
        status = "success"
    else:
        status = "running"
    return Implied(
        content=text_of(answer) if answer else "",
        message_id=answer.get("id") if answer else None,
        status=status,
    )
