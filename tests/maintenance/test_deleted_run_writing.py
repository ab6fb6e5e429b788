"""A run deleted while it still writes (langgraph-api's rollback of a running run that
nobody streams deletes it before its cancel lands): ``adelete_for_runs`` succeeds, and
nothing the run puts or writes afterwards is stored (``maintenance.gate``), on both
stores. The thread's history before the run is kept, and the next run continues it."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from typing import Annotated, Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from tests.maintenance.oracle import run_ids
from tests.support.factory_saver import factory_saver
from tests.support.seeds import Store, uuid_thread_id

pytestmark = pytest.mark.backends("sqlite", "postgres")

# Writes whose checkpoint is not stored: what a deleted run's late writes would leave.
ORPHAN_WRITES = {
    "sqlite": (
        "SELECT count(*) FROM writes w WHERE w.thread_id = ? AND NOT EXISTS (SELECT 1 "
        "FROM checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = "
        "w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)"
    ),
    "postgres": (
        "SELECT count(*) FROM checkpoint_writes w WHERE w.thread_id = %s AND NOT EXISTS "
        "(SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns "
        "= w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)"
    ),
}


@pytest.fixture
async def saver(store: Store, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    """The saver ``langgraph.json``'s factory yields for ``store``: the graph writes
    through it and the rollback deletes through it, as inside langgraph-api."""
    async with factory_saver(store, monkeypatch) as saver:
        yield saver


class Steps(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    until: int
    step: int


def stepping_graph(saver: BaseCheckpointSaver, steps: list[str]) -> Any:
    """Steps until ``until``, a checkpoint (and its writes) each; ``steps`` records
    every step taken, stored or not."""

    async def step(state: Steps) -> dict[str, Any]:
        await asyncio.sleep(0.002)
        steps.append(f"step {state['step']}")
        return {"step": state["step"] + 1, "messages": [AIMessage(f"step {state['step']}")]}

    def more(state: Steps) -> str:
        return "step" if state["step"] < state["until"] else "__end__"

    builder = StateGraph(Steps)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", more)
    return builder.compile(checkpointer=saver)


def orphan_writes(store: Store, thread_id: str) -> int:
    if store.backend == "sqlite":
        with closing(sqlite3.connect(store.path)) as db:
            return db.execute(ORPHAN_WRITES["sqlite"], (thread_id,)).fetchone()[0]
    with psycopg.connect(store.uri) as conn:
        row = conn.execute(ORPHAN_WRITES["postgres"], (thread_id,)).fetchone()
        assert row is not None
        return row[0]


async def test_a_run_deleted_while_it_writes_leaves_nothing(store: Store, saver: Any) -> None:
    steps: list[str] = []
    graph = stepping_graph(saver, steps)
    thread_id = uuid_thread_id()

    def config(run_id: str) -> dict[str, Any]:
        return {
            "configurable": {"thread_id": thread_id},
            "metadata": {"run_id": run_id},
            "recursion_limit": 100_000,
        }

    await graph.ainvoke({"messages": [HumanMessage("kept")], "until": 3, "step": 0}, config("r0"))
    kept = (await graph.aget_state(config("r0"))).values

    cut = {"messages": [HumanMessage("cut")], "until": 100_000, "step": 0}
    running = asyncio.create_task(graph.ainvoke(cut, config("r1")))
    try:
        for _ in range(1_000):
            if list((await run_ids(saver, thread_id)).values()).count("r1") >= 3:
                break
            await asyncio.sleep(0.005)
        await saver.adelete_for_runs(["r1"])
        # The run goes on (its cancel has not landed): twenty more steps.
        deleted_at = len(steps)
        for _ in range(1_000):
            if len(steps) >= deleted_at + 20:
                break
            await asyncio.sleep(0.005)
        assert len(steps) >= deleted_at + 20
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running

    assert "r1" not in (await run_ids(saver, thread_id)).values()
    assert orphan_writes(store, thread_id) == 0
    assert (await graph.aget_state(config("r0"))).values == kept
    await graph.ainvoke({"messages": [HumanMessage("next")], "until": 1, "step": 0}, config("r2"))
    humans = [m.text for m in (await graph.aget_state(config("r2"))).values["messages"]]
    assert [h for h in humans if not h.startswith("step")] == ["kept", "next"]
