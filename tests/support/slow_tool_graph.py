"""A graph for end-to-end tests (``langgraph.json`` → ``graphs``): a tool call that
runs ``EVOSCIENTIST_TEST_TOOL_SECONDS`` (default 4) without writing anything, as a long
search or a sandboxed experiment does, then an answer."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

SLOW_ANSWER = "The slow tool finished; here is the answer."
CALL_ID = "call-slow-1"


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def plan(state: State) -> dict[str, Any]:
    call = {"name": "slow_search", "args": {"query": "anything"}, "id": CALL_ID}
    return {"messages": [AIMessage("", tool_calls=[call])]}


async def slow_search(state: State) -> dict[str, Any]:
    await asyncio.sleep(float(os.environ.get("EVOSCIENTIST_TEST_TOOL_SECONDS", "4")))
    return {"messages": [ToolMessage("found it", tool_call_id=CALL_ID, name="slow_search")]}


def respond(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage(SLOW_ANSWER)]}


builder = StateGraph(State)
builder.add_node("plan", plan)
builder.add_node("slow_search", slow_search)
builder.add_node("respond", respond)
builder.add_edge(START, "plan")
builder.add_edge("plan", "slow_search")
builder.add_edge("slow_search", "respond")
graph = builder.compile()
