"""The server's thread status read from the in-memory runtime's own table: fresh on
every read, whatever the runtime did to the table in between (a status changed in
place, a thread deleted, the table replaced). The runtime's real ``GLOBAL_STORE`` is
used, with rows shaped as its ``Threads``/``Runs`` ops write them; end to end, inside
a real ``langgraph dev``, ``tests/e2e/test_run_status.py`` holds the statuses."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

import pytest
from langgraph_runtime_inmem.database import GLOBAL_STORE

from evoscientist_final_answer.server.runtime import (
    RuntimeRunStatus,
    RuntimeThreadStatus,
    runtime_runs,
)
from evoscientist_final_answer.store.host_process import RuntimeUnavailable


def empty_runtime_table(monkeypatch: pytest.MonkeyPatch, name: str) -> list[dict[str, Any]]:
    """The in-memory runtime's table ``name``, empty, for this test only."""
    monkeypatch.setenv("LANGGRAPH_RUNTIME_EDITION", "inmem")
    rows: list[dict[str, Any]] = []
    monkeypatch.setitem(GLOBAL_STORE, name, rows)
    return rows


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    return empty_runtime_table(monkeypatch, "threads")


def thread_row(status: str = "idle") -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "thread_id": uuid4(),
        "status": status,
        "metadata": {},
        "created_at": now,
        "updated_at": now,
        "values": None,
    }


def test_a_status_changed_in_place_is_read_fresh(table: list[dict[str, Any]]) -> None:
    row = thread_row("busy")
    table.extend([thread_row(), row])
    status = RuntimeThreadStatus()
    thread_id = str(row["thread_id"])
    assert status.status(thread_id) == "busy"
    row["status"] = "idle"  # as ``Threads.set_status`` does when the run ends
    assert status.status(thread_id) == "idle"
    row["status"] = "busy"  # as ``Runs.put`` does for the next run
    assert status.status(thread_id) == "busy"


def test_a_deleted_thread_is_unknown(table: list[dict[str, Any]]) -> None:
    row = thread_row("busy")
    table.append(row)
    status = RuntimeThreadStatus()
    assert status.status(str(row["thread_id"])) == "busy"
    table.remove(row)
    assert status.status(str(row["thread_id"])) is None


def test_a_moved_row_is_found_again(table: list[dict[str, Any]]) -> None:
    first, second = thread_row(), thread_row("interrupted")
    table.extend([first, second])
    status = RuntimeThreadStatus()
    assert status.status(str(second["thread_id"])) == "interrupted"
    table.remove(first)  # the remembered position now holds nothing
    table.append(thread_row("busy"))
    assert status.status(str(second["thread_id"])) == "interrupted"


def test_a_replaced_table_is_read_anew(
    table: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    row = thread_row("busy")
    table.append(row)
    status = RuntimeThreadStatus()
    assert status.status(str(row["thread_id"])) == "busy"
    replaced = {**row, "status": "idle"}  # a table loaded from disk: new list, new rows
    monkeypatch.setitem(GLOBAL_STORE, "threads", [replaced])
    assert status.status(str(row["thread_id"])) == "idle"
    monkeypatch.setitem(GLOBAL_STORE, "threads", [])
    assert status.status(str(row["thread_id"])) is None


def test_ids_the_server_could_never_hold_are_unknown(table: list[dict[str, Any]]) -> None:
    table.append(thread_row())
    assert RuntimeThreadStatus().status("a1b2c3d4") is None
    assert RuntimeThreadStatus().status(str(UUID(int=0))) is None


def test_another_runtime_is_asked_through_the_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGGRAPH_RUNTIME_EDITION", "postgres")
    with pytest.raises(RuntimeUnavailable):
        RuntimeThreadStatus().status(str(uuid4()))
    monkeypatch.delenv("LANGGRAPH_RUNTIME_EDITION")
    with pytest.raises(RuntimeUnavailable):
        RuntimeThreadStatus().status(str(uuid4()))


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    return empty_runtime_table(monkeypatch, "runs")


def run_row(thread_id: UUID, status: str = "running") -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "run_id": uuid4(),
        "thread_id": thread_id,
        "status": status,
        "metadata": {},
        "kwargs": {},
        "created_at": now,
        "updated_at": now,
    }


def test_a_threads_runs_are_read_from_the_run_table(runs: list[dict[str, Any]]) -> None:
    thread, other = uuid4(), uuid4()
    done, running = run_row(thread, "success"), run_row(thread, "running")
    runs.extend([done, run_row(other, "pending"), running])
    assert runtime_runs(str(thread)) == {
        str(done["run_id"]): "success",
        str(running["run_id"]): "running",
    }
    running["status"] = "success"  # as ``Runs.set_status`` does when the run ends
    assert runtime_runs(str(thread))[str(running["run_id"])] == "success"
    runs.remove(done)  # deleted through the API
    assert list(runtime_runs(str(thread))) == [str(running["run_id"])]
    assert runtime_runs("a1b2c3d4") == {}
    runs.append({**run_row(thread), "status": None})  # no status: no run to report
    assert list(runtime_runs(str(thread))) == [str(running["run_id"])]


def test_a_runs_status_is_read_fresh_by_its_id(
    runs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    row = run_row(uuid4())
    runs.extend([run_row(uuid4()), row])
    status = RuntimeRunStatus()
    run_id = str(row["run_id"])
    assert status.status(run_id) == "running"
    row["status"] = "success"  # updated in place
    assert status.status(run_id) == "success"
    del runs[0]  # the remembered position moved
    assert status.status(run_id) == "success"
    monkeypatch.setitem(GLOBAL_STORE, "runs", [{**row, "status": "interrupted"}])
    assert status.status(run_id) == "interrupted"  # a table loaded anew
    runs.clear()
    monkeypatch.setitem(GLOBAL_STORE, "runs", runs)
    assert status.status(run_id) is None  # deleted
