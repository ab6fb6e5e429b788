"""The runs a checkpointer deleted (a rollback, a run deleted through the API), so the
route can tell a deleted run from one it has not heard of yet.

A ``run_id`` no checkpoint carries may be a run not written yet (on a PostgreSQL store
other servers share, another server's), so it reads ``pending``. A deleted run is
neither: langgraph-api deleted it, and its checkpoints with it (``adelete_for_runs``),
so the route answers ``404 run_not_found`` for it. Every server reading the store must
know that, not just the one that deleted it, including one started afterwards: the
deletion marks the run in the store itself, in a table of ours (``TABLE``).

- The maintenance's ``adelete_for_runs`` (``maintenance.rollback``) creates the table
  on first use and marks the runs there before deleting their rows, so no reader sees
  the rows gone and the mark missing.
- The route never writes (its sessions are read-only): it reads the table only for a
  ``run_id`` it found no checkpoint of, and a store without the table (nothing deleted
  yet, or an older writer) has no deleted runs. A run once seen deleted is kept
  (``CheckpointAnswerReader.run_deleted``): it is never written again. Measured on a
  repeated read of a ``run_id`` not written yet (the only reads that look): on
  PostgreSQL the lookup adds 0.13 ms to 0.4-0.5 ms (0.3 ms while the table does not
  exist: a statement that fails); on ``sessions.db`` nothing while the change signal
  vouches that no write happened since the run was found unmarked (7 us against
  5.7 us), one trip to the file otherwise.

A server whose database user may not create the table still remembers the runs its
own checkpointer deleted (``recording_deletions``, below), as before the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from evoscientist_final_answer.store.lru import LruCache

TABLE = "evoscientist_deleted_runs"

# One row per deleted run; when, for whoever tidies the table one day.
SQLITE_CREATE_SQL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
  run_id TEXT PRIMARY KEY,
  deleted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)
"""
SQLITE_MARK_SQL = f"INSERT OR IGNORE INTO {TABLE} (run_id) SELECT value FROM json_each(?)"
SQLITE_DELETED_SQL = f"SELECT 1 FROM {TABLE} WHERE run_id = ?"
SQLITE_NO_TABLE = f"no such table: {TABLE}"

POSTGRES_CREATE_SQL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
  run_id text PRIMARY KEY,
  deleted_at timestamptz NOT NULL DEFAULT now()
)
"""
POSTGRES_MARK_SQL = f"INSERT INTO {TABLE} (run_id) SELECT unnest(%s::text[]) ON CONFLICT DO NOTHING"
POSTGRES_DELETED_SQL = f"SELECT 1 AS deleted FROM {TABLE} WHERE run_id = %s"

# Deleted runs remembered in this process: the ones its checkpointer deleted, when the
# table cannot be written; a client asks about a rolled-back run soon after, if ever.
REMEMBERED = 65_536

_deleted: LruCache[str, None] = LruCache(REMEMBERED)

S = TypeVar("S", bound=BaseCheckpointSaver)


def record(run_ids: Sequence[Any]) -> None:
    for run_id in run_ids:
        _deleted.put(str(run_id), None)


def deleted_here(run_id: str) -> bool:
    return run_id in _deleted


def recording_deletions(saver: S) -> S:
    """``saver``, its ``adelete_for_runs`` recording the runs it deleted in this process
    too. Wrapped on the instance: the saver keeps its class (and the name the server
    logs for it)."""
    delete = saver.adelete_for_runs

    async def adelete_for_runs(run_ids: Sequence[str]) -> None:
        await delete(run_ids)
        record(run_ids)

    saver.adelete_for_runs = adelete_for_runs  # type: ignore[method-assign]
    return saver
