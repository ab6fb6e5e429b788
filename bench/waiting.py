"""Long-poll scenarios: how soon a waiter hears of the final commit, and what idle
waiters cost. Writer and waiters share one process here, on separate connections."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph, add_messages
from typing_extensions import TypedDict

from bench.writer import TimedSaver


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def gated_graph(saver: TimedSaver, gate: asyncio.Event):
    async def work(state: dict) -> dict:
        await gate.wait()
        return {"messages": [AIMessage("thinking done", id="w")]}

    def answer(state: dict) -> dict:
        return {"messages": [AIMessage("the final answer", id="final")]}

    builder = StateGraph(State)
    builder.add_node("work", work)
    builder.add_node("answer", answer)
    builder.add_edge(START, "work")
    builder.add_edge("work", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=saver)


async def parked_run(saver: TimedSaver, thread_id: str, gate: asyncio.Event) -> asyncio.Task:
    config = {"configurable": {"thread_id": thread_id}}
    run = asyncio.create_task(
        gated_graph(saver, gate).ainvoke({"messages": [HumanMessage("question")]}, config)
    )
    while not saver.commits:  # the run's first checkpoints are written
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    return run


async def wake_delays(db: Path, app: Any, runs: int) -> list[float]:
    """Seconds from the final checkpoint's commit to the held response's return."""
    delays: list[float] = []
    async with TimedSaver.from_conn_string(str(db)) as saver:
        for index in range(runs):
            saver.commits = []
            gate = asyncio.Event()
            thread_id = f"wake-{index}"
            run = await parked_run(saver, thread_id, gate)
            returned: list[float] = []

            async def hold(tid: str = thread_id, out: list[float] = returned) -> Any:
                response = await app.get(tid, wait=30)
                out.append(time.perf_counter())
                return response.json()

            waiter = asyncio.create_task(hold())
            await asyncio.sleep(0.3)  # parked on the change signal
            gate.set()
            await run
            body = await waiter
            assert body["complete"], body
            delays.append(returned[0] - saver.commits[-1])
    await app.close()
    return delays


async def idle_waiter_cpu(
    db: Path, app: Any, waiters: int, window: float = 5.0
) -> tuple[float, float]:
    """Share of one core the process spends while ``waiters`` requests are held."""
    async with TimedSaver.from_conn_string(str(db)) as saver:
        saver.commits = []
        gate = asyncio.Event()
        run = await parked_run(saver, "idle", gate)
        held = [asyncio.create_task(app.get("idle", wait=30)) for _ in range(waiters)]
        await asyncio.sleep(1.0)  # every request is parked
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(window)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        gate.set()
        await run
        await asyncio.gather(*held)
    await app.close()
    return cpu / wall, wall
