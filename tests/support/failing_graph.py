"""A graph for end-to-end tests (``langgraph.json`` → ``graphs``) whose run fails: a tool
call and its result, then a node that raises ``FAILURE``, as a search backend that goes
down mid-run does."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

FAILURE = "the search backend is down"
CALL_ID = "call-search-1"


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def search(state: State) -> dict[str, Any]:
    call = {"name": "search", "args": {"query": "control groups"}, "id": CALL_ID}
    return {
        "messages": [
            AIMessage("", tool_calls=[call]),
            ToolMessage("two sources", tool_call_id=CALL_ID, name="search"),
        ]
    }


def answer(state: State) -> dict[str, Any]:
    raise RuntimeError(FAILURE)


builder = StateGraph(State)
builder.add_node("search", search)
builder.add_node("answer", answer)
builder.add_edge(START, "search")
builder.add_edge("search", "answer")
graph = builder.compile()
