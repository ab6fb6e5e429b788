"""``AsyncSqliteSaver`` with the store maintenance langgraph-api asks for, each change one
transaction on the saver's own connection, under its lock.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

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
from evoscientist_final_answer.store.deleted_runs import SQLITE_CREATE_SQL, SQLITE_MARK_SQL

logger = logging.getLogger(__name__)

IN_JSON = "IN (SELECT value FROM json_each(?))"
METADATA_TEXT = "CAST(metadata AS TEXT)"
# The index's expression and the rollback query's must be the same text.
RUN_ID_EXPR = (
    f"CASE WHEN json_valid({METADATA_TEXT}) THEN json_extract({METADATA_TEXT}, '$.run_id') END"
)
RUN_INDEX_SQL = f"CREATE INDEX IF NOT EXISTS checkpoints_run_id ON checkpoints ({RUN_ID_EXPR})"
RUN_ROWS_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints "
    f"WHERE {RUN_ID_EXPR} {IN_JSON}"
)
# A rollback's only reads past its runs: the newer rows of a namespace (the gap's
# children among them), a range of the primary key.
LATER_ROWS_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id > ?"
)
CHECKPOINT_BLOB_SQL = (
    "SELECT type, checkpoint FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
REPARENT_SQL = (
    "UPDATE checkpoints SET parent_checkpoint_id = ? "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
SNAPSHOT_SQL = (
    "UPDATE checkpoints SET type = ?, checkpoint = ? "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
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
    CASE WHEN NOT json_valid(CAST(metadata AS TEXT))
        OR json_extract(CAST(metadata AS TEXT), '$.thread_id') IS NULL THEN metadata
    ELSE CAST(json_set(CAST(metadata AS TEXT), '$.thread_id', ?) AS BLOB) END
FROM checkpoints WHERE thread_id = ?
"""
COPY_WRITES_SQL = """
INSERT OR IGNORE INTO writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
SELECT ?, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
FROM writes WHERE thread_id = ?
"""


class SqliteMaintenance(DropsDeletedRuns):
    """The maintenance, as a mixin for any ``AsyncSqliteSaver`` subclass (a host's own
    saver, e.g. upstream EvoScientist's pruning one: docs/upstream-adoption.md). It goes
    first in the bases: its ``setup`` adds the run index after the saver's own, and its
    ``aput``/``aput_writes`` drop a deleted run's (``gate``) before the saver's own run.

    Changes interleave with a run's writes only between whole statements; ID lists go to
    SQLite as one JSON array (``json_each``): no limit on how many. The run index's
    expression, and every query's, reads the run id only from metadata that is JSON: one
    row of anything else must not make every rollback raise ``malformed JSON``. The runs a
    deletion deletes are marked first in a table of ours (``store.deleted_runs``)."""

    # The delta channels a deletion in the middle of a thread re-materialises.
    delta_reducers: Mapping[str, Reducer] = DELTA_REDUCERS
    _run_index_ready = False
    _deleted_runs_table_ready = False

    async def setup(self) -> None:
        """langgraph's tables, and the index a rollback finds its run's rows by."""
        await super().setup()
        if self._run_index_ready:
            return
        async with self.lock:
            await self.conn.execute(RUN_INDEX_SQL)
            await self.conn.commit()
        self._run_index_ready = True

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
        runs, as langgraph-api's rollback of a cancelled run needs; a surviving
        checkpoint after them is re-parented and keeps its values (see ``rollback``)."""
        await self.setup()
        await delete_runs(self, run_ids, self.delta_reducers)

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
            try:
                meta = json.loads(metadata) if metadata else {}
                readable = isinstance(meta, dict)
            except ValueError:
                readable = False
            if not readable:
                logger.warning(
                    "thread %s: checkpoint %s (namespace %r) has metadata that is not a "
                    "JSON object; left as it is",
                    thread_id,
                    checkpoint_id,
                    ns,
                )
                meta = {}
            row = Row(ns, checkpoint_id, parent_id, meta, readable=readable)
            rows.setdefault(thread_id, []).append(row)
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

    async def _delete_writes_of(self, thread_id: str, ns: str, checkpoint_id: str) -> None:
        async with self.lock:
            await self.conn.execute(DELETE_WRITES_SQL, (thread_id, ns, json.dumps([checkpoint_id])))
            await self.conn.commit()

    # -- the rollback's store (``rollback.RunStore``)

    async def _run_rows(self, run_ids: Sequence[str]) -> dict[str, list[Row]]:
        async with self.lock, self.conn.execute(RUN_ROWS_SQL, (json.dumps(run_ids),)) as cur:
            fetched = await cur.fetchall()
        rows: dict[str, list[Row]] = {}
        for thread_id, ns, checkpoint_id, parent_id in fetched:
            rows.setdefault(thread_id, []).append(Row(ns, checkpoint_id, parent_id))
        return rows

    async def _later_rows(self, thread_id: str, ns: str, after: str) -> list[Row]:
        async with self.lock:
            return await self._later_rows_locked(thread_id, ns, after)

    async def _later_rows_locked(self, thread_id: str, ns: str, after: str) -> list[Row]:
        async with self.conn.execute(LATER_ROWS_SQL, (thread_id, ns, after)) as cur:
            return [Row(ns, c, p) for c, p in await cur.fetchall()]

    async def _row_versions(self, thread_id: str, ns: str, ids: Sequence[str]) -> dict[str, Row]:
        return {}  # no blobs to free: values live in each checkpoint

    async def _apply_rollback(self, plan: RollbackPlan) -> bool:
        thread_id = plan.thread_id
        planned = {(r.ns, r.checkpoint_id) for r in plan.reparents}
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                for ns, ids in plan.doomed.items():
                    gone = set(ids)
                    later = await self._later_rows_locked(thread_id, ns, min(ids))
                    children = {
                        (ns, r.checkpoint_id)
                        for r in later
                        if r.parent_id in gone and r.checkpoint_id not in gone
                    }
                    if children - planned:
                        await self.conn.rollback()
                        return False
                for r in plan.reparents:
                    key = (thread_id, r.ns, r.checkpoint_id)
                    if r.snapshots:
                        await self._store_snapshots(key, r.snapshots)
                    await self.conn.execute(REPARENT_SQL, (r.parent_id, *key))
                for ns, ids in plan.doomed.items():
                    await self.conn.execute(DELETE_WRITES_SQL, (thread_id, ns, json.dumps(ids)))
                    await self.conn.execute(
                        DELETE_CHECKPOINTS_SQL, (thread_id, ns, json.dumps(ids))
                    )
            except BaseException:
                await self.conn.rollback()
                raise
            await self.conn.commit()
        return True

    async def _mark_deleted(self, run_ids: Sequence[str]) -> None:
        async with self.lock:
            if not self._deleted_runs_table_ready:
                # Here, not in ``setup``: a store nothing was ever deleted from needs no
                # table, and the route reads its absence as "no deleted runs".
                await self.conn.execute(SQLITE_CREATE_SQL)
            await self.conn.execute(SQLITE_MARK_SQL, (json.dumps(list(run_ids)),))
            await self.conn.commit()
        self._deleted_runs_table_ready = True

    async def _store_snapshots(
        self, key: tuple[str, str, str], snapshots: Mapping[str, tuple[str, Any]]
    ) -> None:
        async with self.conn.execute(CHECKPOINT_BLOB_SQL, key) as cur:
            type_, blob = await cur.fetchone()
        checkpoint = self.serde.loads_typed((type_, blob))
        checkpoint["channel_values"].update({c: s for c, (_, s) in snapshots.items()})
        await self.conn.execute(SNAPSHOT_SQL, (*self.serde.dumps_typed(checkpoint), *key))


class MaintainedSqliteSaver(SqliteMaintenance, AsyncSqliteSaver):
    """``AsyncSqliteSaver`` with the maintenance: the saver ``langgraph.json``'s factory
    yields (its name is the one langgraph-api logs)."""
