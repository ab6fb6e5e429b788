"""``answer.state``: the answer from a thread state in the langgraph API's JSON shape
(the route's SDK fallback and the client's F2a path). Built from real graph states,
messages dumped with ``model_dump()`` as the API does; it must agree with the direct
checkpoint read of the same thread."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.state import answer_from_state
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import (
    AGENT_NAME,
    REASONING_CASES,
    SeededThread,
    Seeder,
    checkpoint_id_of,
    expected_answer,
    join_graph,
    thread_state_json,
)

COMPARED = ("content", "reasoning", "status", "message_id", "checkpoint_id", "run_id", "interrupts")


def comparable(answer: FinalAnswer) -> dict[str, Any]:
    body = answer.to_json(include_reasoning=True)
    body["error_code"] = answer.error and answer.error["code"]
    return {key: body[key] for key in (*COMPARED, "error_code", "complete", "completed_at")}


async def all_threads(seeder: Seeder) -> list[SeededThread]:
    threads = await seeder.every_scenario()
    threads.append(await seeder.input_not_yet_applied())
    paused_join = seeder.thread(
        join_graph(seeder.saver, interrupt_before=["summary"]), label="join"
    )
    await seeder.run(paused_join, {"messages": [HumanMessage("go")]})
    threads.append(paused_join)
    for case in REASONING_CASES:
        threads.append(await seeder.chat(["earlier", case.message], mode="delta"))
    return threads


async def test_json_state_agrees_with_the_direct_read(seeder: Seeder) -> None:
    reader = SqliteAnswerReader(seeder.db_path, AGENT_NAME)
    try:
        for thread in await all_threads(seeder):
            snapshot = await thread.state()
            state = thread_state_json(snapshot)
            from_api = answer_from_state(thread.thread_id, state)
            direct = await reader.read(thread.thread_id)
            assert from_api.source == "api"
            assert from_api.content == expected_answer(snapshot), thread.label
            assert comparable(from_api) == comparable(direct), thread.label
            assert from_api.checkpoint_id == checkpoint_id_of(snapshot)
            assert from_api.updated_at == direct.updated_at
    finally:
        await reader.close()


async def test_json_state_is_plain_json(seeder: Seeder) -> None:
    thread = await seeder.agent()
    state = thread_state_json(await thread.state())
    messages = state["values"]["messages"]
    assert all(isinstance(m, dict) and m["type"] in {"human", "ai", "tool"} for m in messages)
    assert messages[-1]["content"][0]["type"] == "reasoning"


async def test_interrupt_and_error_from_json(seeder: Seeder) -> None:
    interrupted = await seeder.interrupted({"question": "go ahead?"})
    snapshot = await interrupted.state()
    answer = answer_from_state(interrupted.thread_id, thread_state_json(snapshot))
    assert answer.status is RunStatus.INTERRUPTED and answer.complete
    assert answer.interrupts == [{"id": i.id, "value": i.value} for i in snapshot.interrupts]

    failed = await seeder.failed("kaboom")
    answer = answer_from_state(failed.thread_id, thread_state_json(await failed.state()))
    assert answer.status is RunStatus.ERROR and answer.complete
    assert answer.error["code"] == "run_failed" and "kaboom" in answer.error["message"]


@pytest.mark.parametrize(
    ("thread_status", "status"),
    [(None, "running"), ("busy", "running"), ("interrupted", "interrupted"), ("idle", "error")],
)
async def test_server_thread_status_on_a_paused_run(
    seeder: Seeder, thread_status: str | None, status: str
) -> None:
    thread = await seeder.paused_before()
    state = thread_state_json(await thread.state())
    answer = answer_from_state(thread.thread_id, state, thread_status=thread_status)
    assert answer.status.value == status
    if thread_status == "idle":  # stopped without finishing: not a success
        assert answer.error["code"] == "run_stopped" and answer.error["retryable"] is True


async def test_busy_thread_is_running_even_if_the_checkpoint_looks_done(seeder: Seeder) -> None:
    thread = await seeder.agent()
    state = thread_state_json(await thread.state())
    assert answer_from_state(thread.thread_id, state).status is RunStatus.SUCCESS
    busy = answer_from_state(thread.thread_id, state, thread_status="busy")
    assert busy.status is RunStatus.RUNNING and busy.complete is False
    assert busy.content == expected_answer(await thread.state())  # latest text still shown


async def test_matches_langgraph_api_serialisation(seeder: Seeder) -> None:
    """Our JSON shape is the server's: same answer through langgraph-api's own code."""
    api_state = pytest.importorskip("langgraph_api.state")
    serde = pytest.importorskip("langgraph_api.serde")
    for thread in (
        await seeder.agent(),
        await seeder.interrupted("ok?"),
        await seeder.failed("boom"),
        await seeder.agent_stopped_before_answer(),
    ):
        snapshot = await thread.state()
        server_json = serde.json_loads(
            serde.json_dumpb(api_state.state_snapshot_to_thread_state(snapshot))
        )
        ours = answer_from_state(thread.thread_id, thread_state_json(snapshot))
        theirs = answer_from_state(thread.thread_id, server_json)
        assert ours == theirs, thread.label
