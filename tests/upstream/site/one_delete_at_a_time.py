"""langgraph dev's in-memory runtime deletes the wrong thread when two deletes overlap:
``Threads.delete`` finds the thread's index, awaits the checkpointer, then pops that
index. upstream's background-run watchers delete their worker threads at once, and so
took a test's own thread mid-run (its run then never ended). The upstream test server
deletes one thread at a time per event loop; test_inmem_deletes.py shows the defect."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any


def install() -> None:
    """Serialise the in-memory runtime's thread deletes on each event loop (every HTTP
    delete runs on the server's one loop)."""
    from langgraph_runtime_inmem import ops

    original = ops.Threads.delete
    if getattr(original, "one_at_a_time", False):
        return
    locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
        weakref.WeakKeyDictionary()
    )

    async def delete(*args: Any, **kwargs: Any) -> Any:
        lock = locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        async with lock:
            return await original(*args, **kwargs)

    delete.one_at_a_time = True  # type: ignore[attr-defined]
    ops.Threads.delete = staticmethod(delete)
