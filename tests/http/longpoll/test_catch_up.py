"""A long-poll whose checkpoint says the run is over while the server still holds it
(``waiting.LongPolls._until_server_catches_up``, ``server.status_watch``): inside
``langgraph dev`` the server marks the run done a moment before it marks the thread
idle, and the route's answer turns on the run, so the waiter wakes on the run's status
in the runtime's own table.

The runtime's real ``GLOBAL_STORE`` holds the rows, shaped as its ops write them; the
checkpoints are a real run's in a real store. The status intervals are set past the
wait, so only the catch-up check can wake the waiter.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any
from uuid import UUID

import pytest
from langgraph_runtime_inmem.database import GLOBAL_STORE

from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.server import api as server_api
from evoscientist_final_answer.server import runtime as server_runtime
from evoscientist_final_answer.server.runtime import RuntimeTables
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from tests.support.seeds import Seeder

pytestmark = pytest.mark.backends("sqlite")


def row(**fields: Any) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {"metadata": {}, "created_at": now, "updated_at": now, **fields}


async def test_the_run_marked_done_wakes_the_waiter_while_the_thread_says_busy(
    seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = await seeder.chat(["the final answer"])
    run_id = thread.run_ids[-1]
    server_thread = row(thread_id=UUID(thread.thread_id), status="busy", values=None)
    server_run = row(
        run_id=UUID(run_id), thread_id=UUID(thread.thread_id), status="running", kwargs={}
    )
    monkeypatch.setenv("LANGGRAPH_RUNTIME_EDITION", "inmem")
    monkeypatch.setitem(GLOBAL_STORE, "threads", [server_thread])
    monkeypatch.setitem(GLOBAL_STORE, "runs", [server_run])
    monkeypatch.setitem(sys.modules, "langgraph_api.server", SimpleNamespace())
    monkeypatch.setattr(server_api, "SERVER_STATUS_POLL_SECONDS", 60.0)
    monkeypatch.setattr(server_runtime, "RUNTIME_STATUS_POLL_SECONDS", 60.0)
    api = ApiAnswerReader(None)
    service = FinalAnswerService(seeder.store.reader(), api, server=RuntimeTables(api))
    assert isinstance(service.server, RuntimeTables)
    try:
        assert (await service.read(thread.thread_id)).complete is False  # the run holds it
        waiter = asyncio.create_task(service.wait(thread.thread_id, None, 10))
        await asyncio.sleep(0.3)
        assert not waiter.done()
        server_run["status"] = "success"  # the thread's own status still says busy
        answer = await asyncio.wait_for(waiter, 5)
    finally:
        await service.close()
    assert answer.complete and answer.content == "the final answer"
