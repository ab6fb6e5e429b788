"""How a turn ended, as the route reports it, on histories real writers leave behind.

- A failed turn that its writer tidied up afterwards (``aupdate_state`` checkpoints, as
  the EvoScientist TUI writes them) stays failed: ``run_failed`` with the exception's
  type and message, never the previous turn's answer.
- A writer cancelled mid-model-call: ``run_cancelled`` when the cancelled call left its
  error behind; when nothing was written, ``running`` until the thread has been silent
  past the configured bound, then ``run_lost``.
- A task that failed while langgraph cancelled its siblings: the failure, not the
  cancellation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage

from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.base import MAX_TIDY_UP
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.store.test_answer_cache import SETTLE_SECONDS
from tests.support.seeds import (
    AGENT_NAME,
    SeededThread,
    Seeder,
    Store,
    checkpoint_id_of,
    route,
    serving,
)

FAILURE = "the search backend is down"


async def get(client: httpx.AsyncClient, thread: SeededThread, **params: Any) -> dict[str, Any]:
    response = await client.get(route(thread.thread_id), params=params)
    assert response.status_code == 200, response.text
    return response.json()


# ------------------------------------------------------------------ failed, then tidied up


@pytest.mark.backends("sqlite", "postgres")
@pytest.mark.parametrize("failure", ["tool", "model"])
@pytest.mark.parametrize("mode", ["delta", "add_messages"])
async def test_a_failed_turn_tidied_up_afterwards_stays_failed(
    client: httpx.AsyncClient, seeder: Seeder, failure: str, mode: str
) -> None:
    thread = await seeder.failed_then_tidied_up(FAILURE, failure=failure, mode=mode)
    snapshot = await thread.state()
    # The premise: langgraph's own view of the newest checkpoint shows nothing wrong.
    assert snapshot.next == () and not any(task.error for task in snapshot.tasks)
    assert snapshot.metadata["source"] == "update"

    body = await get(client, thread)
    assert body["status"] == "error" and body["complete"] is True, body
    assert body["error"] == {
        "code": "run_failed",
        "message": f"RuntimeError: {FAILURE}",
        "retryable": False,
    }
    assert body["content"] == "" == await thread.expected()
    assert "first turn" not in body["content"]
    assert body["checkpoint_id"] == checkpoint_id_of(snapshot)
    assert body["completed_at"] == body["updated_at"]


async def test_an_update_that_answers_the_turn_is_the_answer(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    """Updates that add an answer are not a tidy-up: the turn has been answered."""
    thread = await seeder.failed_then_tidied_up(FAILURE)
    await thread.graph.aupdate_state(
        thread.config, {"messages": [AIMessage("answered by hand")]}, as_node="agent"
    )
    body = await get(client, thread)
    assert (body["status"], body["content"]) == ("success", "answered by hand")
    assert body["content"] == await thread.expected()


async def test_the_look_back_is_bounded(client: httpx.AsyncClient, seeder: Seeder) -> None:
    """Past ``MAX_TIDY_UP`` updates the thread is someone's edit, not a tidy-up: the
    newest checkpoint answers alone."""
    thread = await seeder.failed_then_tidied_up(FAILURE)
    assert (await get(client, thread))["status"] == "error"
    for _ in range(MAX_TIDY_UP):
        await thread.graph.aupdate_state(thread.config, None, as_node="__end__")
    body = await get(client, thread)
    assert (body["status"], body["error"]) == ("success", None)


async def test_a_repeat_poll_of_a_tidied_thread_runs_no_query(
    db_path: Path, seeder: Seeder
) -> None:
    """The look back is part of the head's decode, cached with it."""
    thread = await seeder.failed_then_tidied_up(FAILURE)
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    statements: list[str] = []
    try:
        await reader.read(thread.thread_id)
        await asyncio.sleep(SETTLE_SECONDS)
        first = await reader.read(thread.thread_id)
        assert first.error is not None and first.error["code"] == "run_failed"
        assert reader._conn is not None
        await reader._conn.set_trace_callback(statements.append)
        for _ in range(5):
            assert await reader.read(thread.thread_id) == first
        assert statements == []
    finally:
        await reader.close()


# ------------------------------------------------------------------ cancelled mid-call


@pytest.mark.backends("sqlite", "postgres")
async def test_a_model_call_cancelled_under_its_node_is_a_cancelled_run(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    thread = await seeder.cancelled_mid_model_call(written=True)
    snapshot = await thread.state()
    assert [task.error for task in snapshot.tasks if task.error]  # langgraph wrote it
    body = await get(client, thread)
    assert (body["status"], body["complete"]) == ("error", True)
    assert body["error"]["code"] == "run_cancelled" and body["error"]["retryable"] is False
    assert body["content"] == "draft before the cut" == await thread.expected()


def service_for(store: Store, silence_bound: float) -> FinalAnswerService:
    return FinalAnswerService(store.reader(), None, silence_bound=silence_bound)


@pytest.mark.backends("sqlite", "postgres")
async def test_a_run_cancelled_with_nothing_written_is_lost_after_the_silence_bound(
    store: Store, seeder: Seeder
) -> None:
    """Nothing was written about the cancelled node: the checkpoint looks exactly like a
    live writer busy in it. It stays ``running`` while the thread has been silent for
    less than the bound, and is ``run_lost`` (keeping the partial answer) past it."""
    thread = await seeder.cancelled_mid_model_call(written=False)
    assert (await thread.state()).next == ("model",)
    async with serving(create_app(lambda: service_for(store, 3600))) as patient:
        body = await get(patient, thread)
        assert (body["status"], body["complete"], body["error"]) == ("running", False, None)
    await asyncio.sleep(0.2)
    async with serving(create_app(lambda: service_for(store, 0.1))) as strict:
        body = await get(strict, thread)
        assert (body["status"], body["complete"]) == ("error", True)
        assert body["error"]["code"] == "run_lost" and body["error"]["retryable"] is False
        assert body["content"] == "draft before the cut"
        waited = await strict.get(route(thread.thread_id), params={"wait": "5"})
        assert waited.json()["error"]["code"] == "run_lost"  # complete: no wait


async def test_a_failure_beside_cancelled_siblings_is_the_failure(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    thread = await seeder.sibling_failed("kaboom")
    errors = sorted(str(task.error) for task in (await thread.state()).tasks if task.error)
    assert errors == ["CancelledError()", "RuntimeError('kaboom')"]
    body = await get(client, thread)
    assert body["error"] == {
        "code": "run_failed",
        "message": "RuntimeError: kaboom",
        "retryable": False,
    }
