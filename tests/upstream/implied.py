"""What upstream's own ``GET /threads/{id}/state`` (and ``GET /threads/{id}``) imply the
final answer is, read from their JSON here, independently of the route's code: the last
AI message after the last human message whose text is not empty, its text blocks joined
(reasoning left out), and the run's status; and the route's answer held against it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

ASSISTANT = "EvoScientist"  # upstream's main graph
ROUTE = "/api/threads/{}/final-answer"


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


def ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


async def route_and_state(
    http: httpx.AsyncClient, thread_id: str, **params: Any
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The route's answer, then upstream's own state and thread, read after it."""
    answer = await http.get(ROUTE.format(thread_id), params=params)
    assert answer.status_code == 200, answer.text
    state = await http.get(f"/threads/{thread_id}/state")
    thread = await http.get(f"/threads/{thread_id}")
    return answer.json(), state.json(), thread.json()


def assert_as_implied(answer: dict[str, Any], state: dict[str, Any], thread: dict[str, Any]):
    implied = implied_answer(state, thread)
    assert answer["content"] == implied.content
    assert answer["message_id"] == implied.message_id
    assert answer["status"] == implied.status
    assert answer["complete"] is True
