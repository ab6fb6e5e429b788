"""A thread's status and runs read from the in-memory runtime's own tables.

Inside ``langgraph dev`` (``LANGGRAPH_RUNTIME_EDITION=inmem``) the server keeps its
threads in one process-wide table (``langgraph_runtime_inmem.database.GLOBAL_STORE``
``["threads"]``, a list of dicts that its runs update in place: ``busy`` when a run is
put, ``idle``/``interrupted``/``error`` when it ends). Asking through the SDK's
in-process client costs a whole request through the API (about 2 ms: the route's own
cost twice over); reading the same field from the table costs microseconds and is
just as fresh — it *is* the value that request would return, read on the same event
loop.

Where each thread sits in the table is remembered, checked by identity on every read
(the table still the same list, the same dict still at that position), so a deleted
thread, a replaced table (``GLOBAL_STORE.clear()``/``load()``) or a moved row is
looked up again, never read stale. A thread's runs (``["runs"]``, appended when put,
their ``status`` updated in place, rows dropped when deleted) are read by one pass over
that list, as the runtime's own ``Runs.search`` does for ``runs.list``. Any other
runtime (PostgreSQL-backed ``langgraph_runtime_postgres``, a remote server) is asked
through the API as before.
"""

from __future__ import annotations

import os
import sys
from typing import Any
from uuid import UUID

from evoscientist_final_answer.store.lru import LruCache

RUNTIME_EDITION = "inmem"
RUNTIME_MODULE = "langgraph_runtime_inmem.database"
# Threads whose position in the table is remembered.
KNOWN_POSITIONS = 4096


class RuntimeUnavailable(Exception):
    """This process holds no in-memory runtime table to read."""


def runtime_table(name: str = "threads") -> list[dict[str, Any]]:
    """One of the in-memory runtime's tables, when this process serves from one."""
    if os.environ.get("LANGGRAPH_RUNTIME_EDITION") != RUNTIME_EDITION:
        raise RuntimeUnavailable("not the in-memory runtime")
    database = sys.modules.get(RUNTIME_MODULE)
    store = getattr(database, "GLOBAL_STORE", None)
    table = store.get(name) if isinstance(store, dict) else None
    if not isinstance(table, list):
        raise RuntimeUnavailable(f"no {name} table")
    return table


def runtime_readable() -> bool:
    """This process serves from the in-memory runtime's tables."""
    try:
        runtime_table()
    except RuntimeUnavailable:
        return False
    return True


def runtime_runs(thread_id: str) -> dict[str, str]:
    """The server's runs of a thread, run id → status (``pending``, ``running``,
    ``success``…), a row without a status left out as the API's records without one
    are; raises ``RuntimeUnavailable`` when there is no table to read."""
    runs = runtime_table("runs")
    try:
        key = UUID(thread_id)
    except ValueError:
        return {}  # the API holds only UUIDs
    statuses = ((row.get("run_id"), _status(row)) for row in runs if row.get("thread_id") == key)
    return {str(run_id): status for run_id, status in statuses if status is not None}


class RuntimeRowStatus:
    """``status(id)``: the ``status`` of the row with that id in one of the runtime's
    tables, or None when the server holds no such row (as the API would answer)."""

    def __init__(self, table: str, key_field: str) -> None:
        self._table = table
        self._key_field = key_field
        self._positions: LruCache[UUID, tuple[list[dict[str, Any]], int, dict[str, Any]]] = (
            LruCache(KNOWN_POSITIONS)
        )

    def status(self, row_id: str) -> str | None:
        """Raises ``RuntimeUnavailable`` when there is no table to read."""
        rows = runtime_table(self._table)
        try:
            key = UUID(row_id)
        except ValueError:
            return None  # the API holds only UUIDs (it answers such an id with a 422)
        known = self._positions.get(key)
        if known is not None:
            table, position, row = known
            if table is rows and position < len(rows) and rows[position] is row:
                return _status(row)
        for position, row in enumerate(rows):
            if row.get(self._key_field) == key:
                self._positions.put(key, (rows, position, row))
                return _status(row)
        return None


class RuntimeThreadStatus(RuntimeRowStatus):
    """The server's status of a thread (``busy``, ``idle``, ``interrupted``, ``error``)."""

    def __init__(self) -> None:
        super().__init__("threads", "thread_id")


class RuntimeRunStatus(RuntimeRowStatus):
    """The server's status of a run (``pending``, ``running``, ``success``…)."""

    def __init__(self) -> None:
        super().__init__("runs", "run_id")


def _status(row: dict[str, Any]) -> str | None:
    status = row.get("status")
    return None if status is None else str(status)
