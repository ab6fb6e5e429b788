"""A graph for end-to-end tests (``langgraph.json`` → ``graphs``) that pauses for a
human: a tool call and its result, then a dynamic ``interrupt(REVIEW)``; the value the
run is resumed with is answered back."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict

REVIEW = {"question": "Approve the experiment plan?", "options": ["yes", "no"]}
CALL_ID = "call-plan-1"


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def plan(state: State) -> dict[str, Any]:
    call = {"name": "draft_plan", "args": {"topic": "control groups"}, "id": CALL_ID}
    return {
        "messages": [
            AIMessage("", tool_calls=[call]),
            ToolMessage("plan drafted", tool_call_id=CALL_ID, name="draft_plan"),
        ]
    }


def review(state: State) -> dict[str, Any]:
    reply = interrupt(REVIEW)
    return {"messages": [AIMessage(f"Reviewed: {reply}. The plan stands.")]}


builder = StateGraph(State)
builder.add_node("plan", plan)
builder.add_node("review", review)
builder.add_edge(START, "plan")
builder.add_edge("plan", "review")
graph = builder.compile()
