"""``AsyncSqliteSaver`` with the store maintenance langgraph-api asks for.

Every change runs in one transaction on the saver's own connection, under its lock,
so it interleaves with a run's writes only between whole statements of theirs. ID
lists go to SQLite as one JSON array (``json_each``): no limit on how many.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from EvoScientist.maintenance.plan import (
    Deletion,
    Row,
    deletions,
    keep_latest,
    loader,
    thread_ids_to_prune,
)

IN_JSON = "IN (SELECT value FROM json_each(?))"
DELETE_THREADS_SQL = (
    f"DELETE FROM checkpoints WHERE thread_id {IN_JSON}",
    f"DELETE FROM writes WHERE thread_id {IN_JSON}",
)
ROWS_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata "
    "FROM checkpoints WHERE {where}"
)
DELETE_WRITES_SQL = (
    f"DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id {IN_JSON}"
)
DELETE_CHECKPOINTS_SQL = (
    f"DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id {IN_JSON}"
)
ORPHAN_SQL = (
    "UPDATE checkpoints SET parent_checkpoint_id = NULL "
    f"WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id {IN_JSON}"
)
# Metadata is a JSON document in a BLOB; the copy's ``thread_id`` names the copy.
COPY_CHECKPOINTS_SQL = """
INSERT OR IGNORE INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
    CASE WHEN json_extract(CAST(metadata AS TEXT), '$.thread_id') IS NULL THEN metadata
    ELSE CAST(json_set(CAST(metadata AS TEXT), '$.thread_id', ?) AS BLOB) END
FROM checkpoints WHERE thread_id = ?
"""
COPY_WRITES_SQL = """
INSERT OR IGNORE INTO writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
SELECT ?, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
FROM writes WHERE thread_id = ?
"""


class MaintainedSqliteSaver(AsyncSqliteSaver):
    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep each namespace's latest checkpoint and the ancestors
        its ``DeltaChannel`` values are rebuilt from (see ``plan``); ``"delete"``:
        delete the threads. One transaction per thread (one for all, to delete)."""
        ids = thread_ids_to_prune(thread_ids, strategy)
        if not ids:
            return
        await self.setup()
        if strategy == "delete":
            async with self.lock:
                for sql in DELETE_THREADS_SQL:
                    await self.conn.execute(sql, (json.dumps(ids),))
                await self.conn.commit()
            return
        for thread_id in ids:
            rows = await self._rows("thread_id = ?", (thread_id,))
            kept = await keep_latest(rows[thread_id] if rows else [], loader(self, thread_id))

            def doomed(row: Row, kept: dict[str, set[str]] = kept) -> bool:
                return row.checkpoint_id not in kept[row.ns]

            await self._delete(thread_id, deletions(rows.get(thread_id, []), doomed))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata names one of the
        runs, as langgraph-api's rollback of a cancelled run needs."""
        runs = [str(r) for r in run_ids]
        if not runs:
            return
        await self.setup()
        rows = await self._rows(
            f"json_extract(CAST(metadata AS TEXT), '$.run_id') {IN_JSON}", (json.dumps(runs),)
        )
        wanted = set(runs)
        for thread_id, thread_rows in rows.items():
            gone = deletions(thread_rows, lambda r: r.metadata.get("run_id") in wanted)
            await self._delete(thread_id, gone)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of the source thread, the whole parent chain
        with its IDs, under the target thread's ID."""
        await self.setup()
        source, target = str(source_thread_id), str(target_thread_id)
        async with self.lock:
            await self.conn.execute(COPY_CHECKPOINTS_SQL, (target, target, source))
            await self.conn.execute(COPY_WRITES_SQL, (target, source))
            await self.conn.commit()

    async def _rows(self, where: str, params: tuple[str, ...]) -> dict[str, list[Row]]:
        async with self.lock, self.conn.execute(ROWS_SQL.format(where=where), params) as cur:
            fetched = await cur.fetchall()
        rows: dict[str, list[Row]] = {}
        for thread_id, ns, checkpoint_id, parent_id, metadata in fetched:
            meta = json.loads(metadata) if metadata else {}
            rows.setdefault(thread_id, []).append(Row(ns, checkpoint_id, parent_id, meta))
        return rows

    async def _delete(self, thread_id: str, gone: list[Deletion]) -> None:
        if not gone:
            return
        async with self.lock:
            for d in gone:
                ids = json.dumps(d.checkpoint_ids)
                await self.conn.execute(DELETE_WRITES_SQL, (thread_id, d.ns, ids))
                await self.conn.execute(DELETE_CHECKPOINTS_SQL, (thread_id, d.ns, ids))
                if d.orphans:
                    await self.conn.execute(ORPHAN_SQL, (thread_id, d.ns, json.dumps(d.orphans)))
            await self.conn.commit()
