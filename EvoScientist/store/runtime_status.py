"""A thread's status read from the in-memory runtime's own thread table.

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
looked up again, never read stale. Any other runtime (PostgreSQL-backed
``langgraph_runtime_postgres``, a remote server) is asked through the API as before.
"""

from __future__ import annotations

import os
import sys
from typing import Any
from uuid import UUID

from EvoScientist.store.lru import LruCache

RUNTIME_EDITION = "inmem"
RUNTIME_MODULE = "langgraph_runtime_inmem.database"
# Threads whose position in the table is remembered.
KNOWN_POSITIONS = 4096


class RuntimeUnavailable(Exception):
    """This process holds no in-memory runtime table to read."""


def runtime_table() -> list[dict[str, Any]]:
    """The in-memory runtime's thread table, when this process serves from one."""
    if os.environ.get("LANGGRAPH_RUNTIME_EDITION") != RUNTIME_EDITION:
        raise RuntimeUnavailable("not the in-memory runtime")
    database = sys.modules.get(RUNTIME_MODULE)
    store = getattr(database, "GLOBAL_STORE", None)
    threads = store.get("threads") if isinstance(store, dict) else None
    if not isinstance(threads, list):
        raise RuntimeUnavailable("no thread table")
    return threads


class RuntimeThreadStatus:
    """``status(thread_id)``: the server's status of a thread, or None when the server
    does not hold the thread (as the API's search would answer)."""

    def __init__(self) -> None:
        self._positions: LruCache[UUID, tuple[list[dict[str, Any]], int, dict[str, Any]]] = (
            LruCache(KNOWN_POSITIONS)
        )

    def status(self, thread_id: str) -> str | None:
        """Raises ``RuntimeUnavailable`` when there is no table to read."""
        threads = runtime_table()
        try:
            key = UUID(thread_id)
        except ValueError:
            return None  # the API holds only UUIDs (it answers such an id with a 422)
        known = self._positions.get(key)
        if known is not None:
            table, position, row = known
            if table is threads and position < len(threads) and threads[position] is row:
                return _status(row)
        for position, row in enumerate(threads):
            if row.get("thread_id") == key:
                self._positions.put(key, (threads, position, row))
                return _status(row)
        return None


def _status(row: dict[str, Any]) -> str | None:
    status = row.get("status")
    return None if status is None else str(status)
