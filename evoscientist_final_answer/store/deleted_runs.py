"""The runs a checkpointer deleted (a rollback, a run deleted through the API), marked in
the store itself (``TABLE``), so every server's route answers ``404 run_not_found`` for
them rather than ``pending`` for a run not written yet (docs/final-answer.md, rollback).
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
    too, so a server whose database user may not create the table still knows its own.
    Wrapped on the instance: the saver keeps its class (and the name the server logs for it)."""
    delete = saver.adelete_for_runs

    async def adelete_for_runs(run_ids: Sequence[str]) -> None:
        await delete(run_ids)
        record(run_ids)

    saver.adelete_for_runs = adelete_for_runs  # type: ignore[method-assign]
    return saver
