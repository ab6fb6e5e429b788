"""What store maintenance must not change: each checkpoint as langgraph itself decodes
it (``graph.aget_state`` at that checkpoint id: values and ``next``), and the shape of
the chains left (every parent a stored checkpoint)."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

Decoded = tuple[dict[str, Any], tuple[str, ...]]


def at(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    configurable = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


async def stored(saver: BaseCheckpointSaver, thread_id: str) -> dict[str, str | None]:
    """The thread's root checkpoints: id -> parent id."""
    rows = {}
    async for t in saver.alist(at(thread_id)):
        parent = t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
        rows[t.config["configurable"]["checkpoint_id"]] = parent
    return rows


async def run_ids(saver: BaseCheckpointSaver, thread_id: str) -> dict[str, str | None]:
    """The thread's root checkpoints: id -> the run that wrote it."""
    return {
        t.config["configurable"]["checkpoint_id"]: t.metadata.get("run_id")
        async for t in saver.alist(at(thread_id))
    }


async def decode(graph: CompiledStateGraph, thread_id: str, checkpoint_id: str) -> Decoded:
    snapshot = await graph.aget_state(at(thread_id, checkpoint_id))
    return dict(snapshot.values), tuple(snapshot.next)


async def decode_all(
    graph: CompiledStateGraph, saver: BaseCheckpointSaver, thread_id: str
) -> dict[str, Decoded]:
    return {c: await decode(graph, thread_id, c) for c in await stored(saver, thread_id)}


async def assert_decodes_unchanged(
    graph: CompiledStateGraph,
    saver: BaseCheckpointSaver,
    thread_id: str,
    before: dict[str, Decoded],
) -> dict[str, str | None]:
    """Every surviving checkpoint decodes as it did, and names a stored parent (or
    none); returns what survives."""
    now = await stored(saver, thread_id)
    for checkpoint_id, parent in now.items():
        assert parent is None or parent in now, (checkpoint_id, parent)
        assert await decode(graph, thread_id, checkpoint_id) == before[checkpoint_id], (
            thread_id,
            checkpoint_id,
        )
    return now
