"""Graphs that write the benchmark's threads: real runs, real checkpoints.

A research thread is ``size`` messages long: one step writes the history (tool calls
and results, answers with reasoning), then the last turn: a question and its answer.
With ``messages="delta"`` the history goes through the agent's own ``DeltaChannel``
(snapshot every 100 updates) one message per step until the newest checkpoint sits
``updates_since_snapshot`` updates past its last snapshot — 99 is the worst case.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.graph.message import _messages_delta_reducer
from typing_extensions import TypedDict

from EvoScientist.agent import MESSAGES_SNAPSHOT_FREQUENCY

Mode = Literal["plain", "delta"]
PARAGRAPH = (
    "We compared the intervention against a matched baseline across three cohorts; "
    "effect sizes were small but consistent (d≈0.21–0.34), and the pre-registered "
    "analysis survived the robustness checks listed in the appendix. "
) * 8  # ~1,800 characters, with non-ASCII


def filler(index: int) -> AnyMessage:
    """Message ``index`` of a long research history, ~1.7 KB serialised on average."""
    key = hashlib.sha256(str(index).encode()).hexdigest()[:12]
    kind = index % 4
    if kind == 0:
        return HumanMessage(f"Follow-up {index}: {PARAGRAPH[:200]}", id=f"h-{key}")
    if kind == 1:
        return AIMessage(
            content="",
            tool_calls=[{"name": "search_notes", "args": {"query": f"q{index}"}, "id": f"c{key}"}],
            id=f"a-{key}",
        )
    if kind == 2:
        return ToolMessage(f"note {index}: {PARAGRAPH}", tool_call_id=f"c{key}", id=f"t-{key}")
    return AIMessage(
        content=[
            {"type": "reasoning", "reasoning": f"step {index}: {PARAGRAPH[:300]}"},
            {"type": "text", "text": f"Finding {index}. {PARAGRAPH}"},
        ],
        id=f"a-{key}",
    )


def final_answer_text(size: int) -> str:
    return f"## Final answer after {size} messages\n\n{PARAGRAPH}\n\nDone."


class PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    todo: int


class DeltaState(TypedDict):
    messages: Annotated[
        list[AnyMessage],
        DeltaChannel(_messages_delta_reducer, snapshot_frequency=MESSAGES_SNAPSHOT_FREQUENCY),
    ]
    todo: int


def build(mode: Mode, size: int, updates_since_snapshot: int = 99, **compile_kwargs: Any):
    """A graph whose one run leaves a ``size``-message thread (input: ``{}``)."""
    # Updates of the messages channel: the history's first write, one per later step,
    # then the question and the answer. A thread too short to give every step a
    # message gives the last steps empty writes (still updates of the channel).
    steps = 0
    if mode == "delta":
        steps = MESSAGES_SNAPSHOT_FREQUENCY + updates_since_snapshot - 3
    bulk = max(size - 2 - steps, 1)
    with_message = size - 2 - bulk  # steps that add one message each

    def history(state: dict) -> dict:
        return {"messages": [filler(i) for i in range(bulk)], "todo": steps}

    def step(state: dict) -> dict:
        done = steps - state["todo"]
        added = [filler(bulk + done)] if done < with_message else []
        return {"messages": added, "todo": state["todo"] - 1}

    def ask(state: dict) -> dict:
        return {"messages": [HumanMessage("So what is the conclusion?", id="final-question")]}

    def answer(state: dict) -> dict:
        reply = AIMessage(
            content=[
                {"type": "reasoning", "reasoning": "Summarise the findings."},
                {"type": "text", "text": final_answer_text(size)},
            ],
            id="final-answer",
        )
        return {"messages": [reply]}

    builder = StateGraph(DeltaState if mode == "delta" else PlainState)
    builder.add_node("history", history)
    builder.add_node("step", step)
    builder.add_node("ask", ask)
    builder.add_node("answer", answer)
    builder.add_edge(START, "history")
    builder.add_conditional_edges("history", lambda s: "step" if s["todo"] else "ask")
    builder.add_conditional_edges("step", lambda s: "step" if s["todo"] else "ask")
    builder.add_edge("ask", "answer")
    builder.add_edge("answer", END)
    return builder.compile(**compile_kwargs)


def make_bench_graph(config: dict | None = None):
    """For ``langgraph dev``: the thread's shape comes from the run's configurable."""
    configurable = (config or {}).get("configurable", {})
    return build(
        configurable.get("mode", "plain"),
        int(configurable.get("size", 20)),
        int(configurable.get("updates_since_snapshot", 99)),
    )


class CountingState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    count: int


def counting_graph(checkpoints: int, **compile_kwargs: Any):
    """A 20-message thread behind ``checkpoints`` steps that leave the messages alone."""

    def tick(state: dict) -> dict:
        return {"count": state.get("count", 0) + 1}

    def chat(state: dict) -> dict:
        history = [filler(i) for i in range(18)]
        return {
            "messages": [*history, HumanMessage("Conclusion?", id="q"), AIMessage("Yes.", id="a")]
        }

    builder = StateGraph(CountingState)
    builder.add_node("tick", tick)
    builder.add_node("chat", chat)
    builder.add_edge(START, "tick")
    builder.add_conditional_edges(
        "tick", lambda s: "tick" if s["count"] < max(checkpoints - 3, 1) else "chat"
    )
    builder.add_edge("chat", END)
    return builder.compile(**compile_kwargs)
