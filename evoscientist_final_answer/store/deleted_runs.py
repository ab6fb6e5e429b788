"""The runs this process's checkpointer deleted (a rollback, a run deleted through the
API), so the route can tell a run it deleted from one it never heard of.

On a PostgreSQL store other servers share, a ``run_id`` this server does not know and
no checkpoint carries may be another server's run, not yet written: it stays
``pending``. A run this server rolled back is neither: langgraph-api deleted it here
(and its checkpoints, through ``adelete_for_runs``), so the route answers
``404 run_not_found`` for it, as on ``sessions.db``. Only the server that deleted the
run knows; another server sharing the database still reads it as ``pending``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from evoscientist_final_answer.store.lru import LruCache

# Deleted runs remembered; a client asks about a rolled-back run soon after, if ever.
REMEMBERED = 65_536

_deleted: LruCache[str, None] = LruCache(REMEMBERED)

S = TypeVar("S", bound=BaseCheckpointSaver)


def record(run_ids: Sequence[Any]) -> None:
    for run_id in run_ids:
        _deleted.put(str(run_id), None)


def deleted_here(run_id: str) -> bool:
    return run_id in _deleted


def recording_deletions(saver: S) -> S:
    """``saver``, its ``adelete_for_runs`` recording the runs it deleted. Wrapped on the
    instance: the saver keeps its class (and the name the server logs for it)."""
    delete = saver.adelete_for_runs

    async def adelete_for_runs(run_ids: Sequence[str]) -> None:
        await delete(run_ids)
        record(run_ids)

    saver.adelete_for_runs = adelete_for_runs  # type: ignore[method-assign]
    return saver
