"""The EvoScientist agent graph served by ``langgraph dev``.

Its messages live in a ``DeltaChannel`` as upstream EvoScientist (deepagents) keeps
them: most checkpoints store no messages at all, only the writes of each step, with a
full snapshot every ``snapshot_frequency`` updates.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from EvoScientist import settings
from EvoScientist.models import chat_model
from EvoScientist.offline_model import notes_for

MESSAGES_SNAPSHOT_FREQUENCY = 100


class AgentState(TypedDict):
    messages: Annotated[
        list[AnyMessage],
        DeltaChannel(_messages_delta_reducer, snapshot_frequency=MESSAGES_SNAPSHOT_FREQUENCY),
    ]


@tool
def search_notes(query: str) -> str:
    """Search the research notes for prior work on a topic."""
    return notes_for(query)


TOOLS = [search_notes]


def build_graph(model: BaseChatModel | None = None, **compile_kwargs: Any):
    """Compile the agent: ``agent`` ⇄ ``tools`` until the model answers without a tool call."""
    llm = (model or chat_model()).bind_tools(TOOLS)

    async def agent(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["messages"], config)]}

    builder = StateGraph(AgentState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder.compile(**compile_kwargs)


def make_graph(config: RunnableConfig | None = None):
    """Graph factory for ``langgraph.json``; the server supplies the checkpointer.

    The server calls it for every run and every state read, and runs a copy of what it
    returns (with its own checkpointer and store), so one compiled graph per model
    serves them all: compiling anew cost each run milliseconds on the event loop that
    every run and request shares, and left its objects to the garbage collector."""
    return _compiled(settings.model_name())


@functools.lru_cache(maxsize=4)
def _compiled(model_name: str):
    return build_graph(chat_model(model_name))
