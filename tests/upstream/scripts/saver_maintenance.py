"""Run by the upstream environment's interpreter (``test_upstream_maintenance.py``):
our store maintenance mixed into upstream's own saver class, on a real graph's
checkpoints in a ``sessions.db`` under ``argv[1]``. Prints what it saw as JSON."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

from EvoScientist.sessions import _ApiPruningCheckpointer
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from evoscientist_final_answer.maintenance.sqlite import SqliteMaintenance


class Maintained(SqliteMaintenance, _ApiPruningCheckpointer):
    """upstream's saver (its pruning, its ``agent_name`` stamps) with our maintenance."""


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def reply(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage(f"answer to {state['messages'][-1].text}")]}


def graph(saver: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=saver)


async def turn(app: Any, thread_id: str, run_id: str) -> None:
    config = {
        "configurable": {"thread_id": thread_id},
        # What langgraph-api puts in a run's metadata; upstream stamps graph rows.
        "metadata": {"run_id": run_id, "graph_id": "EvoScientist"},
    }
    await app.ainvoke({"messages": [HumanMessage(f"question {run_id}")]}, config)


async def texts(app: Any, thread_id: str) -> list[str]:
    state = await app.aget_state({"configurable": {"thread_id": thread_id}})
    return [m.text for m in state.values.get("messages", [])]


async def count(saver: Any, thread_id: str) -> int:
    return len([c async for c in saver.alist({"configurable": {"thread_id": thread_id}})])


async def main(root: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with _ApiPruningCheckpointer.from_conn_string_with_keep(str(root / "plain.db")) as plain:
        await plain.setup()
        try:
            await plain.adelete_for_runs(["r"])
            seen["plain_adelete_for_runs"] = "ran"
        except NotImplementedError:
            seen["plain_adelete_for_runs"] = "NotImplementedError"
    async with Maintained.from_conn_string_with_keep(str(root / "sessions.db")) as saver:
        await saver.setup()
        app = graph(saver)
        for run in ("r0", "r1", "r2"):
            await turn(app, "t", run)
        seen["three_turns"] = await texts(app, "t")
        await saver.adelete_for_runs(["r2"])
        seen["after_rollback"] = await texts(app, "t")
        await turn(app, "t", "r3")
        seen["turn_after_rollback"] = await texts(app, "t")
        await saver.acopy_thread("t", "copy")
        seen["copy"] = await texts(app, "copy")
        seen["checkpoints_before_prune"] = await count(saver, "t")
        await saver.aprune(["t"])
        seen["checkpoints_after_prune"] = await count(saver, "t")
        seen["after_prune"] = await texts(app, "t")
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(Path(sys.argv[1])))))
