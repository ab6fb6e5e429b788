"""``AsyncPostgresSaver`` with the store maintenance langgraph-api asks for: langgraph's own
``aprune`` deletes whole threads and refuses ``keep_latest`` on a ``DeltaChannel`` thread.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import Rollback
from psycopg.errors import DuplicateTable, InsufficientPrivilege, UndefinedTable, UniqueViolation

from evoscientist_final_answer.maintenance.gate import DropsDeletedRuns
from evoscientist_final_answer.maintenance.plan import (
    Deletion,
    Row,
    deletions,
    keep_latest,
    loader,
    thread_ids_to_prune,
)
from evoscientist_final_answer.maintenance.rollback import (
    DELTA_REDUCERS,
    Reducer,
    RollbackPlan,
    delete_runs,
)
from evoscientist_final_answer.store.deleted_runs import POSTGRES_CREATE_SQL, POSTGRES_MARK_SQL

logger = logging.getLogger(__name__)

# Built without blocking the writers (outside a transaction, as the saver's own
# migrations build theirs); the rollback query's expression must be the same.
RUN_INDEX_NAME = "checkpoints_run_id_idx"
RUN_INDEX_SQL = (
    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {RUN_INDEX_NAME} "
    "ON checkpoints ((metadata->>'run_id'))"
)
# A valid index of that name (a CONCURRENTLY build that failed leaves an invalid one).
RUN_INDEX_READY_SQL = """
SELECT EXISTS (
    SELECT 1 FROM pg_index i WHERE i.indexrelid = to_regclass(%s) AND i.indisvalid
) AS ready
"""
DROP_INVALID_RUN_INDEX_SQL = f"DROP INDEX CONCURRENTLY IF EXISTS {RUN_INDEX_NAME}"
RUN_ROWS_SQL = """
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
    checkpoint -> 'channel_versions' AS versions
FROM checkpoints WHERE metadata->>'run_id' = ANY(%s)
"""
# A rollback's only reads past its runs: the newer rows of a namespace (the gap's
# children among them), a range of the primary key; and the rows just before them.
LATER_ROWS_SQL = """
SELECT checkpoint_id, parent_checkpoint_id, checkpoint -> 'channel_versions' AS versions
FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id > %s
"""
ROW_VERSIONS_SQL = """
SELECT checkpoint_id, parent_checkpoint_id, checkpoint -> 'channel_versions' AS versions
FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""
REPARENT_SQL = """
UPDATE checkpoints SET parent_checkpoint_id = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
"""
# A delta channel's blob at a version is its value there (``empty`` when not stored):
# the snapshot replaces it for every checkpoint at that version, all of which share
# that value.
SNAPSHOT_BLOB_SQL = """
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (thread_id, checkpoint_ns, channel, version)
DO UPDATE SET type = EXCLUDED.type, blob = EXCLUDED.blob
"""

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


async def run_index_ready(conn: Any) -> bool:
    cur = await conn.execute(RUN_INDEX_READY_SQL, (RUN_INDEX_NAME,))
    row = await cur.fetchone()
    return row is not None and bool(row["ready"] if isinstance(row, Mapping) else row[0])


async def ensure_run_index(conn: Any) -> None:
    """Create the rollback's index unless a valid one exists (``conn`` in autocommit).

    A user that does not own the tables (they were set up by another) cannot: the
    server still starts, and a rollback reads by a scan until an owner runs setup."""
    if await run_index_ready(conn):
        return
    try:
        await conn.execute(DROP_INVALID_RUN_INDEX_SQL)
        await conn.execute(RUN_INDEX_SQL)
    except InsufficientPrivilege as exc:
        logger.warning("no index on checkpoints' run id (%s): a rollback scans the table", exc)


class MaintainedPostgresSaver(DropsDeletedRuns, AsyncPostgresSaver):
    """``AsyncPostgresSaver`` with the maintenance; a deleted run's later puts and
    writes are dropped (``gate``).

    Each thread's deletion is one transaction; a blob goes only when no checkpoint left in
    its namespace references it. A rollback finds its run's rows by an index on the run id
    (``RUN_INDEX_SQL``), created by the server's setup under its advisory lock or by
    ``setup()``; a surviving checkpoint after them is re-parented (``rollback``), and the
    runs are marked deleted in a table of ours for every server's route
    (``store.deleted_runs``, created by the first deletion, so the servers' user needs the
    right to create it only then)."""

    # The delta channels a deletion in the middle of a thread re-materialises.
    delta_reducers: Mapping[str, Reducer] = DELTA_REDUCERS
    _deleted_runs_table_ready = False

    async def setup(self) -> None:
        """langgraph's tables, and the index a rollback finds its run's rows by."""
        await super().setup()
        async with self._cursor() as cur:
            await ensure_run_index(cur.connection)

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
        metadata names one of the runs, as langgraph-api's rollback needs; a surviving
        checkpoint after them is re-parented and keeps its values (see ``rollback``)."""
        await delete_runs(self, run_ids, self.delta_reducers)

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

    async def _delete_writes_of(self, thread_id: str, ns: str, checkpoint_id: str) -> None:
        async with self._cursor() as cur:
            await cur.execute(DELETE_WRITES_SQL, (thread_id, ns, [checkpoint_id]))

    # -- the rollback's store (``rollback.RunStore``)

    async def _run_rows(self, run_ids: Sequence[str]) -> dict[str, list[Row]]:
        async with self._cursor() as cur:
            await cur.execute(RUN_ROWS_SQL, (list(run_ids),))
            fetched = await cur.fetchall()
        rows: dict[str, list[Row]] = {}
        for r in fetched:
            row = Row(
                r["checkpoint_ns"],
                r["checkpoint_id"],
                r["parent_checkpoint_id"],
                versions=r["versions"] or {},
            )
            rows.setdefault(r["thread_id"], []).append(row)
        return rows

    async def _later_rows(self, thread_id: str, ns: str, after: str) -> list[Row]:
        async with self._cursor() as cur:
            return await _later(cur, thread_id, ns, after)

    async def _row_versions(self, thread_id: str, ns: str, ids: Sequence[str]) -> dict[str, Row]:
        if not ids:
            return {}
        async with self._cursor() as cur:
            await cur.execute(ROW_VERSIONS_SQL, (thread_id, ns, list(ids)))
            fetched = await cur.fetchall()
        return {r["checkpoint_id"]: _row(ns, r) for r in fetched}

    async def _mark_deleted(self, run_ids: Sequence[str]) -> None:
        async with self._cursor() as cur:
            if not self._deleted_runs_table_ready:
                await _create_deleted_runs_table(cur)
            try:
                await cur.execute(POSTGRES_MARK_SQL, (list(run_ids),))
            except (UndefinedTable, InsufficientPrivilege) as exc:
                # Not ours to create or write: this server alone knows (``recording_
                # deletions``), as before the table.
                logger.warning(
                    "runs %s: not marked deleted for the other servers (%s)", run_ids, exc
                )
                return
        self._deleted_runs_table_ready = True

    async def _apply_rollback(self, plan: RollbackPlan) -> bool:
        thread_id = plan.thread_id
        planned = {(r.ns, r.checkpoint_id) for r in plan.reparents}
        applied = False
        # A child committed by another connection after this check is not seen (read
        # committed): only a writer continuing from a checkpoint being deleted writes
        # one, and a rolled-back run is cancelled before its rollback.
        async with self._cursor() as cur, cur.connection.transaction():
            for ns, ids in plan.doomed.items():
                gone = set(ids)
                later = await _later(cur, thread_id, ns, min(ids))
                children = {
                    (ns, r.checkpoint_id)
                    for r in later
                    if r.parent_id in gone and r.checkpoint_id not in gone
                }
                if children - planned:
                    raise Rollback()  # ends the transaction, changing nothing
            for r in plan.reparents:
                for channel, (version, snapshot) in r.snapshots.items():
                    type_, blob = self.serde.dumps_typed(snapshot)
                    params = (thread_id, r.ns, channel, version, type_, blob)
                    await cur.execute(SNAPSHOT_BLOB_SQL, params)
                await cur.execute(REPARENT_SQL, (r.parent_id, thread_id, r.ns, r.checkpoint_id))
            for ns, ids in plan.doomed.items():
                await cur.execute(DELETE_WRITES_SQL, (thread_id, ns, ids))
                await cur.execute(DELETE_CHECKPOINTS_SQL, (thread_id, ns, ids))
                for channel, versions in plan.freed.get(ns, {}).items():
                    await cur.execute(DELETE_BLOBS_SQL, (thread_id, ns, channel, sorted(versions)))
            applied = True
        return applied


async def _create_deleted_runs_table(cur: Any) -> None:
    """The table of deleted runs (``store.deleted_runs``), unless it exists. Here, at
    the first deletion, not at setup: a database nothing was deleted from needs none,
    and the servers' user then needs no right to create it. Two servers' first
    rollbacks may race to create it; the loser finds it made."""
    try:
        await cur.execute(POSTGRES_CREATE_SQL)
    except (UniqueViolation, DuplicateTable):
        pass
    except InsufficientPrivilege:
        pass  # the insert says so, unless another user created it


async def _later(cur: Any, thread_id: str, ns: str, after: str) -> list[Row]:
    await cur.execute(LATER_ROWS_SQL, (thread_id, ns, after))
    return [_row(ns, r) for r in await cur.fetchall()]


def _row(ns: str, r: Mapping[str, Any]) -> Row:
    return Row(ns, r["checkpoint_id"], r["parent_checkpoint_id"], versions=r["versions"] or {})
