"""When a run's checkpoints became visible to another connection, seen from outside the
server: the origin of the crowd's wake times ("wake after the final commit"), since a
checkpoint's own ``ts`` is stamped before the server's checkpointer commits it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

INTERVAL = 0.005
HEADS_SQL = """
SELECT thread_id, max(checkpoint_id) FROM checkpoints
WHERE checkpoint_ns = '' AND thread_id IN ({marks})
GROUP BY thread_id
"""


class CommitClock:
    """Reads the store read-only every ``INTERVAL`` and dates each new head to the start of
    the *previous* read (the last moment it was surely not yet visible), so a wake measured
    from it is never shorter than the true one."""

    def __init__(self, db: Path, thread_ids: list[str]) -> None:
        self._db = db
        self._threads = list(thread_ids)
        self._heads: dict[str, str | None] = {}  # as of the first read: the baseline
        self._seen: dict[tuple[str, str], float] = {}
        self._first: dict[str, float] = {}  # each thread's first head past the baseline
        self._task: asyncio.Task[None] | None = None
        self._connection: sqlite3.Connection | None = None

    async def start(self) -> None:
        """Read the baseline, then keep reading until ``stop``."""
        self._read(time.time())
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def committed(self, thread_id: str, checkpoint_id: str) -> float | None:
        """Latest moment the checkpoint was not yet visible; None if never seen."""
        return self._seen.get((thread_id, checkpoint_id))

    def first_commit(self, thread_id: str) -> float | None:
        """When the thread's first checkpoint after the clock started was committed:
        its run has begun executing (dated like ``committed``)."""
        return self._first.get(thread_id)

    async def _run(self) -> None:
        try:
            previous = time.time()
            while True:
                await asyncio.sleep(INTERVAL)
                started = time.time()
                self._read(previous)
                previous = started
        finally:
            if self._connection is not None:
                self._connection.close()

    def _read(self, not_visible_at: float) -> None:
        """Date each head new since the last read to ``not_visible_at``."""
        sql = HEADS_SQL.format(marks=",".join("?" * len(self._threads)))
        try:
            if self._connection is None:
                self._connection = sqlite3.connect(f"file:{self._db}?mode=ro", uri=True)
            heads = dict(self._connection.execute(sql, self._threads).fetchall())
        except sqlite3.OperationalError:
            return  # not created yet, or busy: read again next time
        for thread_id in self._threads:
            head = heads.get(thread_id)
            if thread_id not in self._heads:  # the first read: the baseline
                self._heads[thread_id] = head
            elif head != self._heads[thread_id]:
                self._heads[thread_id] = head
                self._seen[(thread_id, head)] = not_visible_at
                self._first.setdefault(thread_id, not_visible_at)
