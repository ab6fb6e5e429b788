"""When a run's checkpoints became visible to another connection, seen from outside the
server: the origin of the crowd's wake times ("wake after the final commit").

A checkpoint's own ``ts`` is stamped when the graph builds it, before the server's
checkpointer commits it; under load the commit lands tens of milliseconds later, and a
long-poll cannot see a checkpoint before then. This clock reads the store read-only
every ``INTERVAL`` and dates each new head to the start of the *previous* read (the
last moment it was surely not yet visible), so a wake measured from it is never
shorter than the true one.
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
    def __init__(self, db: Path, thread_ids: list[str]) -> None:
        self._db = db
        self._threads = list(thread_ids)
        self._heads: dict[str, str | None] = dict.fromkeys(self._threads)
        self._seen: dict[tuple[str, str], float] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def committed(self, thread_id: str, checkpoint_id: str) -> float | None:
        """Latest moment the checkpoint was not yet visible; None if never seen."""
        return self._seen.get((thread_id, checkpoint_id))

    async def _run(self) -> None:
        connection = sqlite3.connect(f"file:{self._db}?mode=ro", uri=True)
        sql = HEADS_SQL.format(marks=",".join("?" * len(self._threads)))
        try:
            previous = time.time()
            while True:
                started = time.time()
                try:
                    rows = connection.execute(sql, self._threads).fetchall()
                except sqlite3.OperationalError:
                    rows = []  # not created yet, or busy: read again next time
                for thread_id, head in rows:
                    if head != self._heads.get(thread_id):
                        self._heads[thread_id] = head
                        self._seen[(thread_id, head)] = previous
                previous = started
                await asyncio.sleep(INTERVAL)
        finally:
            connection.close()
