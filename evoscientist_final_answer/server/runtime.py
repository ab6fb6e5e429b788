"""Inside ``langgraph dev``: what the server knows of a thread, read from the in-memory
runtime's own tables (``GLOBAL_STORE``), which a request through the API would return
anyway, at a fraction of its cost. Each row's position is checked by identity on every
read, so nothing is read stale; without the tables, the API is asked (``ServerApi``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any
from uuid import UUID

from evoscientist_final_answer.server import api as server_api
from evoscientist_final_answer.server.api import ServerApi, run_owner
from evoscientist_final_answer.server.status_watch import Lagging, StatusQuery, StatusWatch
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.host_process import RuntimeUnavailable, runtime_table
from evoscientist_final_answer.store.lru import LruCache

# Threads whose position in the table is remembered.
KNOWN_POSITIONS = 4096
# How often the waited-on threads' statuses are read from the table, and how often
# those whose server lags their final checkpoint (the table costs microseconds).
RUNTIME_STATUS_POLL_SECONDS = 0.25
RUNTIME_CATCH_UP_POLL_SECONDS = 0.002


class RuntimeTables(ServerApi):
    """The server this process is, read from its runtime's own tables."""

    def __init__(self, api: ApiAnswerReader) -> None:
        super().__init__(api)
        self._thread_status = RuntimeThreadStatus()

    async def thread_status(self, thread_id: str) -> str | None:
        try:
            status = self._thread_status.status(thread_id)
        except RuntimeUnavailable:
            return await super().thread_status(thread_id)  # another runtime: its API
        self._observed(thread_id, status)
        return status

    async def runs(self, thread_id: str, writer_run_id: str | None) -> Mapping[str, str] | None:
        try:
            return runtime_runs(thread_id)
        except RuntimeUnavailable:
            return await super().runs(thread_id, writer_run_id)

    async def run_owners(self, thread_id: str) -> set[str]:
        try:
            return runtime_run_owners(thread_id)
        except RuntimeUnavailable:
            return await super().run_owners(thread_id)

    def _new_status_watch(self) -> StatusWatch:
        threads = self._thread_status
        runs = RuntimeRunStatus()

        async def statuses(thread_ids: list[str]) -> dict[str, Hashable]:
            try:
                found = ((t, threads.status(t)) for t in thread_ids)
                return {t: status for t, status in found if status is not None}
            except RuntimeUnavailable as exc:  # pragma: no cover - the table went away
                raise StoreUnavailable(str(exc)) from exc

        def catch_up(lagging: Lagging) -> StatusQuery:
            # The route's answer turns on the run the checkpoint names, which the server
            # marks done before it marks the thread idle: its status signs too.
            async def caught_up(thread_ids: list[str]) -> dict[str, Hashable]:
                found = {}
                try:
                    for thread_id in thread_ids:
                        run_id = lagging.get(thread_id)
                        run = runs.status(run_id) if run_id is not None else None
                        found[thread_id] = (threads.status(thread_id), run)
                except RuntimeUnavailable as exc:  # pragma: no cover - the table went away
                    raise StoreUnavailable(str(exc)) from exc
                return found

            return caught_up

        return StatusWatch(
            statuses,
            catch_up,
            status_every=RUNTIME_STATUS_POLL_SECONDS,
            catch_up_every=RUNTIME_CATCH_UP_POLL_SECONDS,
            catch_up_signs_status=False,
            caught_up_cap=server_api.SERVER_STATUS_POLL_SECONDS,
        )


def runtime_runs(thread_id: str) -> dict[str, str]:
    """The server's runs of a thread, run id → status (``pending``, ``running``,
    ``success``…), oldest first, a row without a status left out as the API's records
    without one are; raises ``RuntimeUnavailable`` when there is no table to read."""
    runs = runtime_table("runs")
    try:
        key = UUID(thread_id)
    except ValueError:
        return {}  # the API holds only UUIDs
    own = sorted((row for row in runs if row.get("thread_id") == key), key=_created)
    statuses = ((row.get("run_id"), _status(row)) for row in own)
    return {str(run_id): status for run_id, status in statuses if status is not None}


def runtime_run_owners(thread_id: str) -> set[str]:
    """The users who started the thread's runs, from the runtime's own run table;
    raises ``RuntimeUnavailable`` when there is no table to read."""
    runs = runtime_table("runs")
    try:
        key = UUID(thread_id)
    except ValueError:
        return set()  # the API holds only UUIDs
    return {owner for row in runs if row.get("thread_id") == key if (owner := run_owner(row))}


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


def _created(row: dict[str, Any]) -> str:
    return str(row.get("created_at") or "")


def _status(row: dict[str, Any]) -> str | None:
    status = row.get("status")
    return None if status is None else str(status)
