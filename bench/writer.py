"""A run that writes a checkpoint every 100 ms, as a process of its own; prints its
step times (seconds between consecutive checkpoint commits) as JSON."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph, add_messages
from typing_extensions import TypedDict

STEP_SLEEP = 0.1


class TimedSaver(AsyncSqliteSaver):
    """The real saver, noting when each checkpoint is committed."""

    commits: list[float]

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().aput(*args, **kwargs)
        self.commits.append(time.perf_counter())
        return result


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    left: int


def graph(steps: int, saver: AsyncSqliteSaver):
    async def work(state: dict) -> dict:
        await asyncio.sleep(STEP_SLEEP)
        n = steps - state["left"]
        return {"messages": [AIMessage(f"progress {n}", id=f"p{n}")], "left": state["left"] - 1}

    builder = StateGraph(State)
    builder.add_node("work", work)
    builder.add_edge(START, "work")
    builder.add_conditional_edges("work", lambda s: "work" if s["left"] > 0 else END)
    return builder.compile(checkpointer=saver)


async def run(db: str, thread_id: str, steps: int) -> list[float]:
    async with TimedSaver.from_conn_string(db) as saver:
        saver.commits = []
        config = {"configurable": {"thread_id": thread_id}, "recursion_limit": steps + 10}
        await graph(steps, saver).ainvoke({"messages": [HumanMessage("go")], "left": steps}, config)
        return [b - a for a, b in zip(saver.commits, saver.commits[1:], strict=False)]


if __name__ == "__main__":
    db_path, thread, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print(json.dumps(asyncio.run(run(db_path, thread, count))))
