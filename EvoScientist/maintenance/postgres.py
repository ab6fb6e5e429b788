"""``AsyncPostgresSaver`` with the store maintenance langgraph-api asks for.

langgraph's own ``aprune`` deletes whole threads, and refuses ``keep_latest`` on a
thread that uses a ``DeltaChannel`` (as the agent's messages do); ours keeps what the
channel is rebuilt from (see ``plan``). Each thread's deletion is one transaction; a
blob goes only when no checkpoint left in its namespace references it.
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from EvoScientist.maintenance.plan import (
    Deletion,
    Row,
    deletions,
    keep_latest,
    loader,
    thread_ids_to_prune,
)

ROWS_SQL = """
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata,
    checkpoint -> 'channel_versions' AS versions
FROM checkpoints WHERE {where}
"""
DELETE_WRITES_SQL = """
DELETE FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""
DELETE_CHECKPOINTS_SQL = """
DELETE FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""
ORPHAN_SQL = """
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""
DELETE_BLOBS_SQL = """
DELETE FROM checkpoint_blobs
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = ANY(%s)
"""
COPY_SQL = (
    """
    INSERT INTO checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
         metadata)
    SELECT %(target)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
        CASE WHEN metadata ? 'thread_id'
        THEN jsonb_set(metadata, '{thread_id}', to_jsonb(%(target)s::text))
        ELSE metadata END
    FROM checkpoints WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
    """,
    """
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT %(target)s, checkpoint_ns, channel, version, type, blob
    FROM checkpoint_blobs WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
    """,
    """
    INSERT INTO checkpoint_writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
    SELECT %(target)s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type,
        blob
    FROM checkpoint_writes WHERE thread_id = %(source)s
    ON CONFLICT DO NOTHING
    """,
)


class MaintainedPostgresSaver(AsyncPostgresSaver):
    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep each namespace's latest checkpoint and the ancestors
        its ``DeltaChannel`` values are rebuilt from (see ``plan``), with their writes
        and blobs; ``"delete"``: langgraph's own (every row of the threads, one
        transaction)."""
        ids = thread_ids_to_prune(thread_ids, strategy)
        if not ids:
            return
        if strategy == "delete":
            await super().aprune(ids, strategy="delete")
            return
        for thread_id in ids:
            rows = (await self._rows("thread_id = %s", (thread_id,))).get(thread_id, [])
            kept = await keep_latest(rows, loader(self, thread_id))

            def doomed(row: Row, kept: dict[str, set[str]] = kept) -> bool:
                return row.checkpoint_id not in kept[row.ns]

            await self._delete(thread_id, deletions(rows, doomed))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (their writes, the blobs only they used) whose
        metadata names one of the runs, as langgraph-api's rollback needs."""
        runs = [str(r) for r in run_ids]
        if not runs:
            return
        rows = await self._rows(
            "thread_id IN (SELECT thread_id FROM checkpoints WHERE metadata->>'run_id' = ANY(%s))",
            (runs,),
        )
        wanted = set(runs)
        for thread_id, thread_rows in rows.items():
            gone = deletions(thread_rows, lambda r: r.metadata.get("run_id") in wanted)
            await self._delete(thread_id, gone)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and write of the source thread, the whole parent
        chain with its IDs, under the target thread's ID, in one transaction."""
        params = {"source": str(source_thread_id), "target": str(target_thread_id)}
        async with self._cursor() as cur, cur.connection.transaction():
            for sql in COPY_SQL:
                await cur.execute(sql, params)

    async def _rows(self, where: str, params: tuple[object, ...]) -> dict[str, list[Row]]:
        async with self._cursor() as cur:
            await cur.execute(ROWS_SQL.format(where=where), params)
            fetched = await cur.fetchall()
        rows: dict[str, list[Row]] = {}
        for r in fetched:
            row = Row(
                r["checkpoint_ns"],
                r["checkpoint_id"],
                r["parent_checkpoint_id"],
                r["metadata"] or {},
                r["versions"] or {},
            )
            rows.setdefault(r["thread_id"], []).append(row)
        return rows

    async def _delete(self, thread_id: str, gone: list[Deletion]) -> None:
        if not gone:
            return
        async with self._cursor() as cur, cur.connection.transaction():
            for d in gone:
                await cur.execute(DELETE_WRITES_SQL, (thread_id, d.ns, d.checkpoint_ids))
                await cur.execute(DELETE_CHECKPOINTS_SQL, (thread_id, d.ns, d.checkpoint_ids))
                if d.orphans:
                    await cur.execute(ORPHAN_SQL, (thread_id, d.ns, d.orphans))
                for channel, versions in d.freed.items():
                    await cur.execute(
                        DELETE_BLOBS_SQL, (thread_id, d.ns, channel, sorted(versions))
                    )
