"""``GET /api/threads/{thread_id}/final-answer`` over in-process HTTP, against
checkpoint stores written by real graphs, each answer held against the same graph's
``aget_state``. (The seed design's section 8 server tests, and the rest of the route's
contract.) Every test that seeds a store runs on both backends: a ``sessions.db`` file
and a PostgreSQL database."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.types import interrupt

from EvoScientist.checkpointer import sessions_checkpointer
from EvoScientist.offline_model import answer_for, notes_for, reasoning_for
from evoscientist_final_answer.http.app import create_app
from tests.support.bounds import HELD_WAIT_S, NOT_HELD_S
from tests.support.seeds import (
    AGENT_NAME,
    DELTA_PREAMBLE,
    OTHER_AGENT,
    REASONING_CASES,
    SUBGRAPH_DRAFT,
    SUBGRAPH_QUESTION,
    ReasoningCase,
    SeededThread,
    Seeder,
    answer_client,
    checkpoint_id_of,
    expected_answer,
    expected_message,
    gated,
    hex8_thread_id,
    join_graph,
    new_run_id,
    node_graph,
    resume,
    route,
    serving,
    uuid_thread_id,
)

pytestmark = pytest.mark.backends("sqlite", "postgres")

SEED_FIELDS = ["content", "completed_at", "complete"]
ALL_FIELDS = [
    *SEED_FIELDS,
    "status",
    "thread_id",
    "run_id",
    "checkpoint_id",
    "message_id",
    "updated_at",
    "source",
    "error",
    "interrupts",
]


async def get(
    client: httpx.AsyncClient,
    thread_id: str,
    headers: dict[str, str] | None = None,
    **params: Any,
) -> httpx.Response:
    return await client.get(route(thread_id), params=params, headers=headers)


async def get_json(client: httpx.AsyncClient, thread_id: str, **params: Any) -> dict[str, Any]:
    response = await get(client, thread_id, **params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["etag"]  # on every 200
    assert response.headers["cache-control"] == "no-store"
    return response.json()


def same_time(a: str | None, b: str | None) -> bool:
    assert a is not None and b is not None
    return datetime.fromisoformat(a) == datetime.fromisoformat(b)


def assert_error(response: httpx.Response, status: int, code: str, retryable: bool) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"detail", "error"}
    assert set(body["error"]) == {"code", "message", "retryable"}
    assert body["error"]["code"] == code
    assert body["error"]["retryable"] is retryable
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["error"]["message"] == body["detail"]
    assert "Traceback" not in response.text
    assert response.headers["cache-control"] == "no-store"


# ------------------------------------------------------------------ section 8 (seed)


async def test_completed_thread_returns_last_ai_text(
    client: httpx.AsyncClient, agent_thread: SeededThread
) -> None:
    snapshot = await agent_thread.state()
    assert snapshot.next == ()
    body = await get_json(client, agent_thread.thread_id)

    assert list(body) == ALL_FIELDS
    assert body["complete"] is True
    assert body["status"] == "success"
    assert body["content"] == expected_answer(snapshot)
    # ... which is the offline model's text, without its reasoning block.
    question = "How do I test a hypothesis?"
    assert body["content"] == answer_for(question, [notes_for(question)])
    assert reasoning_for(question) not in body["content"]
    assert body["message_id"] == expected_message(snapshot).id
    assert body["checkpoint_id"] == checkpoint_id_of(snapshot)
    assert body["thread_id"] == agent_thread.thread_id
    assert body["run_id"] == agent_thread.last_run_id
    assert body["source"] == "checkpointer"
    assert body["error"] is None
    assert body["interrupts"] == []
    assert same_time(body["updated_at"], snapshot.created_at)
    assert body["completed_at"] == body["updated_at"]
    assert "reasoning" not in body


async def test_mid_run_thread_is_not_complete(
    client: httpx.AsyncClient, paused_thread: SeededThread
) -> None:
    snapshot = await paused_thread.state()
    assert snapshot.next == ("agent",)
    body = await get_json(client, paused_thread.thread_id)
    assert body["complete"] is False
    assert body["status"] == "running"
    assert body["completed_at"] is None
    assert body["content"] == expected_answer(snapshot) == ""
    assert body["checkpoint_id"] == checkpoint_id_of(snapshot)
    assert body["updated_at"] is not None


async def test_graph_stopped_mid_way_then_finishing(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    """A real run caught while its second node executes, then let finish."""
    gate = asyncio.Event()
    graph = node_graph(
        seeder.saver,
        [("first", lambda s: {"messages": [AIMessage("step one")]}), ("slow", gated(gate, "done"))],
    )
    thread = seeder.thread(graph)
    run = asyncio.create_task(seeder.run(thread, {"messages": [HumanMessage("go")]}))
    try:
        snapshot = await wait_for_next(thread, ("slow",))
        body = await get_json(client, thread.thread_id)
        assert body["status"] == "running" and body["complete"] is False
        assert body["content"] == expected_answer(snapshot) == "step one"
    finally:
        gate.set()
        await run
    snapshot = await thread.state()
    body = await get_json(client, thread.thread_id)
    assert body["status"] == "success" and body["complete"] is True
    assert body["content"] == expected_answer(snapshot) == "done"


async def test_unknown_thread_is_404(client: httpx.AsyncClient, agent_thread: SeededThread) -> None:
    response = await get(client, uuid_thread_id())
    assert_error(response, 404, "thread_not_found", retryable=False)


async def test_unknown_thread_is_404_in_an_empty_store(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    response = await get(client, hex8_thread_id())
    assert_error(response, 404, "thread_not_found", retryable=False)


async def test_mixed_reasoning_and_text_gives_only_text(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    reply = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "SECRET-REASONING first"},
            {"type": "text", "text": "The visible answer."},
            {"type": "reasoning", "reasoning": "SECRET-REASONING again"},
        ]
    )
    thread = await seeder.chat([reply])
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(await thread.state()) == "The visible answer."
    assert "SECRET-REASONING" not in body["content"]


# ------------------------------------------------------------------ reasoning formats


@pytest.mark.parametrize("case", REASONING_CASES, ids=lambda case: case.name)
@pytest.mark.parametrize("include_reasoning", [False, True])
async def test_reasoning_formats(
    client: httpx.AsyncClient, seeder: Seeder, case: ReasoningCase, include_reasoning: bool
) -> None:
    # A previous turn first, so "the latest turn" is not the whole thread.
    thread = await seeder.chat(["an earlier answer", case.message])
    snapshot = await thread.state()
    params = {"include_reasoning": "true"} if include_reasoning else {}
    body = await get_json(client, thread.thread_id, **params)

    assert body["content"] == expected_answer(snapshot) == case.text
    assert case.hidden not in body["content"]
    if include_reasoning:
        assert list(body) == [*ALL_FIELDS, "reasoning"]
        assert case.reasoning in body["reasoning"]
        if not case.reasoning:
            assert body["reasoning"] == ""
    else:
        assert "reasoning" not in body


async def test_include_reasoning_on_the_agent_answer(
    client: httpx.AsyncClient, agent_thread: SeededThread
) -> None:
    body = await get_json(client, agent_thread.thread_id, include_reasoning="true")
    question = "How do I test a hypothesis?"
    assert body["reasoning"] == reasoning_for(question)
    assert body["reasoning"] not in body["content"]
    assert body["content"] == expected_answer(await agent_thread.state())


# ------------------------------------------------------------------ turns and runs


async def test_tool_call_flow_answers_after_the_tool(
    client: httpx.AsyncClient, two_turn_agent_thread: SeededThread
) -> None:
    thread = two_turn_agent_thread
    snapshot = await thread.state()
    kinds = [type(m).__name__ for m in snapshot.values["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"] * 2
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(snapshot)
    assert body["content"] == answer_for("Second question?", [notes_for("Second question?")])
    assert body["message_id"] == snapshot.values["messages"][-1].id


async def test_new_turn_without_answer_is_empty_not_previous(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    thread = await seeder.agent_stopped_before_answer()
    snapshot = await thread.state()
    assert snapshot.next == ("agent",)
    assert isinstance(snapshot.values["messages"][-1], HumanMessage)
    previous = snapshot.values["messages"][-2].text
    assert previous  # the first turn's answer is in the thread ...
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(snapshot) == ""  # ... but never shown
    assert body["message_id"] is None
    assert body["status"] == "running" and body["complete"] is False


async def test_new_input_still_in_start_channel_is_empty_not_previous(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    thread = await seeder.input_not_yet_applied()
    snapshot = await thread.state()
    assert snapshot.next == ("__start__",)
    assert snapshot.values["messages"][-1].text == "first answer"  # still the old turn
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(snapshot) == ""
    assert body["status"] == "running" and body["complete"] is False
    assert body["run_id"] == thread.last_run_id


async def test_two_runs_each_answer_by_run_id(client: httpx.AsyncClient, seeder: Seeder) -> None:
    thread = await seeder.chat(["answer of run one", "answer of run two"])
    first, second = thread.run_ids
    assert first != second
    for run_id in (first, second):
        snapshot = thread.snapshots[run_id]
        body = await get_json(client, thread.thread_id, run_id=run_id)
        assert body["run_id"] == run_id
        assert body["content"] == expected_answer(snapshot)
        assert body["checkpoint_id"] == checkpoint_id_of(snapshot)
        assert body["status"] == "success" and body["complete"] is True
    latest = await get_json(client, thread.thread_id)
    assert latest["content"] == "answer of run two" and latest["run_id"] == second


async def test_unknown_run_id_on_known_thread_is_pending(
    client: httpx.AsyncClient, agent_thread: SeededThread
) -> None:
    run_id = new_run_id()
    body = await get_json(client, agent_thread.thread_id, run_id=run_id)
    assert body["status"] == "pending"
    assert body["complete"] is False
    assert body["content"] == ""
    assert body["run_id"] == run_id
    assert body["completed_at"] is None and body["checkpoint_id"] is None


async def test_run_id_on_unknown_thread_is_404(
    client: httpx.AsyncClient, agent_thread: SeededThread
) -> None:
    response = await get(client, uuid_thread_id(), run_id=agent_thread.last_run_id)
    assert_error(response, 404, "thread_not_found", retryable=False)


async def test_dynamic_interrupt(client: httpx.AsyncClient, seeder: Seeder) -> None:
    thread = await seeder.interrupted({"question": "approve the plan?", "options": [1, 2]})
    snapshot = await thread.state()
    assert snapshot.interrupts
    body = await get_json(client, thread.thread_id)
    assert body["status"] == "interrupted"
    assert body["complete"] is True
    assert body["interrupts"] == [{"id": i.id, "value": i.value} for i in snapshot.interrupts]
    assert body["content"] == expected_answer(snapshot) == "draft before approval"
    assert same_time(body["completed_at"], snapshot.created_at)

    await seeder.run(thread, resume("yes"))
    snapshot = await thread.state()
    body = await get_json(client, thread.thread_id)
    assert body["status"] == "success" and body["interrupts"] == []
    assert body["content"] == expected_answer(snapshot) == "approved: yes"


async def test_node_that_raises(client: httpx.AsyncClient, seeder: Seeder) -> None:
    thread = await seeder.failed("kaboom: the instrument is offline")
    snapshot = await thread.state()
    assert any(task.error for task in snapshot.tasks)
    body = await get_json(client, thread.thread_id)
    assert body["status"] == "error"
    assert body["complete"] is True
    assert set(body["error"]) == {"code", "message", "retryable"}
    assert body["error"]["code"] == "run_failed"
    assert "kaboom: the instrument is offline" in body["error"]["message"]
    assert body["error"]["retryable"] is False
    assert "Traceback" not in body["error"]["message"]
    assert body["content"] == expected_answer(snapshot) == "partial answer before the failure"


async def test_join_edge_pending_is_running_not_success(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    """``add_edge([a, b], c)``: once both branches ran, ``c`` is pending only through
    the ``join:`` barrier; the route must not call that run finished."""
    gate = asyncio.Event()
    thread = seeder.thread(join_graph(seeder.saver, gate))
    run = asyncio.create_task(seeder.run(thread, {"messages": [HumanMessage("combine")]}))
    try:
        snapshot = await wait_for_next(thread, ("summary",))
        body = await get_json(client, thread.thread_id)
        assert body["status"] == "running" and body["complete"] is False
        assert body["content"] == expected_answer(snapshot)
    finally:
        gate.set()
        await run
    body = await get_json(client, thread.thread_id)
    assert body["status"] == "success"
    assert body["content"] == expected_answer(await thread.state()) == "joined summary"


async def test_subgraph_checkpoints_never_answer(client: httpx.AsyncClient, seeder: Seeder) -> None:
    thread = await seeder.subgraph_waiting("PARENT FINAL ANSWER")
    # The thread's newest row in any namespace (no checkpoint_ns in the config).
    (newest,) = [tup.config async for tup in seeder.saver.alist(thread.config, limit=1)]
    newest_ns = newest["configurable"]["checkpoint_ns"]
    newest_id = newest["configurable"]["checkpoint_id"]
    assert newest_ns != ""  # the newest row of the thread is the subgraph's

    snapshot = await thread.state()
    body = await get_json(client, thread.thread_id)
    assert body["checkpoint_id"] == checkpoint_id_of(snapshot) != newest_id
    assert body["content"] == expected_answer(snapshot) == ""
    assert SUBGRAPH_DRAFT not in body["content"]
    assert body["status"] == "interrupted"
    assert [i["value"] for i in body["interrupts"]] == [SUBGRAPH_QUESTION]

    await seeder.run(thread, resume("looks good"))
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(await thread.state()) == "PARENT FINAL ANSWER"
    assert body["status"] == "success"


async def test_add_messages_thread_many_turns(client: httpx.AsyncClient, seeder: Seeder) -> None:
    thread = await seeder.chat([f"plain answer {i}" for i in range(5)], mode="add_messages")
    for run_id in thread.run_ids:
        body = await get_json(client, thread.thread_id, run_id=run_id)
        assert body["content"] == expected_answer(thread.snapshots[run_id])
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(await thread.state()) == "plain answer 4"


async def test_delta_channel_past_several_snapshots(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    thread = await seeder.chat(
        [f"delta answer {i}" for i in range(7)], mode="delta", preamble=DELTA_PREAMBLE
    )
    for run_id in thread.run_ids:  # messages rebuilt from writes, not read from a snapshot
        tup = await seeder.saver.aget_tuple(thread.snapshots[run_id].config)
        assert "messages" not in tup.checkpoint["channel_values"]
    for run_id in thread.run_ids:
        body = await get_json(client, thread.thread_id, run_id=run_id)
        assert body["content"] == expected_answer(thread.snapshots[run_id])
        assert body["message_id"] == expected_message(thread.snapshots[run_id]).id
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(await thread.state()) == "delta answer 6"


@pytest.mark.parametrize("how", ["remove", "overwrite"])
async def test_delta_channel_compacted_with_remove_message_or_overwrite(
    client: httpx.AsyncClient, seeder: Seeder, how: str
) -> None:
    thread = await seeder.delta_compacted(turns=5, how=how)
    snapshot = await thread.state()
    assert len(snapshot.values["messages"]) == 2  # history compacted away
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(snapshot) == f"compacted answer ({how})"
    assert body["message_id"] == snapshot.values["messages"][-1].id


async def test_removing_the_latest_answer_never_shows_the_previous_one(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    thread = await seeder.chat(["kept answer", "answer to retract"], mode="delta")
    snapshot = await thread.state()
    retracted = snapshot.values["messages"][-1]
    await thread.graph.aupdate_state(
        thread.config, {"messages": [RemoveMessage(id=retracted.id)]}, as_node="agent"
    )
    snapshot = await thread.state()
    assert snapshot.values["messages"][-1].text == "question 2"
    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(snapshot) == ""


async def test_other_agent_rows_never_answer(client: httpx.AsyncClient, seeder: Seeder) -> None:
    thread = await seeder.chat(
        ["EvoScientist's answer", "the reviewer's answer"], questions=["q1"], agent_name=AGENT_NAME
    )
    own = thread.snapshots[thread.last_run_id]
    await seeder.run(thread, {"messages": [HumanMessage("q2")]}, agent_name=OTHER_AGENT)
    assert expected_answer(await thread.state()) == "the reviewer's answer"  # newest rows

    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected_answer(own) == "EvoScientist's answer"
    assert body["checkpoint_id"] == checkpoint_id_of(own)
    # The other agent's run is not this agent's: asked for by id it is not written yet.
    body = await get_json(client, thread.thread_id, run_id=thread.last_run_id)
    assert body["status"] == "pending"


async def test_thread_of_another_agent_only_is_404(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    thread = await seeder.chat(["reviewer only"], agent_name=OTHER_AGENT)
    assert_error(await get(client, thread.thread_id), 404, "thread_not_found", retryable=False)


async def test_large_unicode_answer_round_trips(client: httpx.AsyncClient, seeder: Seeder) -> None:
    unit = 'Ünïcödé ✓ 漢字かな 😀👩🏽‍🔬 עברית مرحبا \u2028 e\u0301 \t"quoted" \\ </think>\n'
    big = (unit * (1_050_000 // len(unit.encode("utf-8")) + 1)).strip()
    assert len(big.encode("utf-8")) > 1_000_000
    thread = await seeder.chat([big])
    expected = expected_answer(await thread.state())
    assert expected == big

    body = await get_json(client, thread.thread_id)
    assert body["content"] == expected
    text = await get(client, thread.thread_id, format="text")
    assert text.status_code == 200
    assert text.content.decode("utf-8") == expected


@pytest.mark.parametrize(
    "thread_id",
    [hex8_thread_id(), uuid_thread_id(), "tui session é", "a" * 256, "x"],
    ids=["hex8", "uuid", "printable-unicode", "256-chars", "1-char"],
)
async def test_thread_id_forms(client: httpx.AsyncClient, seeder: Seeder, thread_id: str) -> None:
    thread = await seeder.chat([f"answer for {thread_id[:20]}"], thread_id=thread_id)
    body = await get_json(client, thread_id)
    assert body["thread_id"] == thread_id
    assert body["content"] == expected_answer(await thread.state())


# ------------------------------------------------------------------ parameters


@pytest.mark.parametrize(
    ("path_id", "query"),
    [
        ("ok", "wait=-1"),
        ("ok", "wait=61"),
        ("ok", "wait=abc"),
        ("ok", "wait=nan"),
        ("ok", "wait=1&wait=2"),
        ("ok", "include_reasoning=maybe"),
        ("ok", "format=xml"),
        ("ok", "run_id=a&run_id=b"),
        ("ok", "run_id=" + "r" * 257),
        ("bad%01id", ""),
        ("a" * 257, ""),
        ("%20padded", ""),
    ],
)
async def test_bad_parameters_are_422(
    client: httpx.AsyncClient, agent_thread: SeededThread, path_id: str, query: str
) -> None:
    thread_id = agent_thread.thread_id if path_id == "ok" else path_id
    response = await client.get(f"/api/threads/{thread_id}/final-answer?{query}")
    assert_error(response, 422, "invalid_request", retryable=False)


async def test_format_text(client: httpx.AsyncClient, agent_thread: SeededThread) -> None:
    expected = expected_answer(await agent_thread.state())
    response = await get(client, agent_thread.thread_id, format="text")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == expected
    assert response.headers["x-answer-status"] == "success"
    assert response.headers["x-answer-complete"] == "true"
    assert response.headers["x-answer-run-id"] == agent_thread.last_run_id
    assert response.headers["etag"]
    assert response.headers["cache-control"] == "no-store"


async def test_format_text_while_running(
    client: httpx.AsyncClient, paused_thread: SeededThread
) -> None:
    response = await get(client, paused_thread.thread_id, format="text")
    assert response.status_code == 200
    assert response.text == ""
    assert response.headers["x-answer-status"] == "running"
    assert response.headers["x-answer-complete"] == "false"


async def test_format_text_reports_error_code(client: httpx.AsyncClient, seeder: Seeder) -> None:
    thread = await seeder.failed("kaboom")
    response = await get(client, thread.thread_id, format="text")
    assert response.headers["x-answer-status"] == "error"
    assert response.headers["x-answer-error"] == "run_failed"
    assert response.text == expected_answer(await thread.state())


def answer_headers(response: httpx.Response) -> set[str]:
    return {name.lower() for name in response.headers if name.lower().startswith("x-answer-")}


ALWAYS = {"x-answer-status", "x-answer-complete", "x-answer-source"}


async def test_format_text_headers_appear_as_documented(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    """docs/final-answer.md, "Headers of format=text": which header appears when."""
    done, paused, failed = (
        await seeder.agent(),
        await seeder.paused_before(),
        await seeder.failed("kaboom"),
    )
    success = await get(client, done.thread_id, format="text")
    running = await get(client, paused.thread_id, format="text")
    error = await get(client, failed.thread_id, format="text")
    pending = await get(client, done.thread_id, format="text", run_id="not-started-yet")

    run_and_checkpoint = {"x-answer-run-id", "x-answer-checkpoint-id"}
    assert answer_headers(success) == ALWAYS | run_and_checkpoint | {"x-answer-completed-at"}
    assert answer_headers(running) == ALWAYS | run_and_checkpoint
    assert answer_headers(error) == ALWAYS | run_and_checkpoint | {
        "x-answer-completed-at",
        "x-answer-error",
    }
    assert pending.headers["x-answer-status"] == "pending"
    assert answer_headers(pending) == ALWAYS | {"x-answer-run-id"}
    for response in (success, running, error, pending):
        assert response.headers["content-type"] == "text/plain; charset=utf-8"


async def test_empty_parameters_mean_their_defaults(
    client: httpx.AsyncClient, agent_thread: SeededThread
) -> None:
    plain = await get(client, agent_thread.thread_id)
    empty = await client.get(
        f"{route(agent_thread.thread_id)}?run_id=&wait=&include_reasoning=&format="
    )
    assert empty.status_code == 200, empty.text
    assert empty.json() == plain.json()
    assert empty.headers["etag"] == plain.headers["etag"]


# ------------------------------------------------------------------ caching


async def test_etag_and_if_none_match(client: httpx.AsyncClient, seeder: Seeder) -> None:
    thread = await seeder.chat(["first", "second"], questions=["q1"])
    first = await get(client, thread.thread_id)
    etag = first.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"')
    assert first.headers["cache-control"] == "no-store"

    again = await get(client, thread.thread_id)
    assert again.headers["etag"] == etag  # stable while nothing changes

    for validator in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        cached = await get(client, thread.thread_id, headers={"If-None-Match": validator})
        assert cached.status_code == 304, validator
        assert cached.content == b""
        assert cached.headers["etag"] == etag
        assert cached.headers["cache-control"] == "no-store"

    stale = await get(client, thread.thread_id, headers={"If-None-Match": '"stale"'})
    assert stale.status_code == 200 and stale.json()["content"] == "first"

    # Each representation has its own validator.
    as_text = await get(client, thread.thread_id, format="text")
    with_reasoning = await get(client, thread.thread_id, include_reasoning="true")
    assert len({etag, as_text.headers["etag"], with_reasoning.headers["etag"]}) == 3
    assert (
        await get(client, thread.thread_id, headers={"If-None-Match": etag}, format="text")
    ).status_code == 200

    # A new turn changes the answer and so the validator.
    await seeder.run(thread, {"messages": [HumanMessage("q2")]})
    changed = await get(client, thread.thread_id, headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.json()["content"] == expected_answer(await thread.state()) == "second"
    assert changed.headers["etag"] != etag


async def test_cache_control_no_store_everywhere(
    client: httpx.AsyncClient, agent_thread: SeededThread
) -> None:
    responses = [
        await get(client, agent_thread.thread_id),
        await get(client, agent_thread.thread_id, format="text"),
        await get(client, uuid_thread_id()),
        await get(client, agent_thread.thread_id, wait="-1"),
    ]
    assert [r.status_code for r in responses] == [200, 200, 404, 422]
    for response in responses:
        assert response.headers["cache-control"] == "no-store"


# ------------------------------------------------------------------ long polling


async def wait_for_next(thread: SeededThread, nodes: tuple[str, ...], timeout: float = 5.0):
    """Poll ``aget_state`` until the running graph has checkpointed before ``nodes``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snapshot = await thread.state()
        if snapshot.next == nodes:
            return snapshot
        await asyncio.sleep(0.01)
    raise AssertionError(f"the run never reached {nodes}")


async def test_wait_on_completed_thread_returns_at_once(
    client: httpx.AsyncClient, agent_thread: SeededThread
) -> None:
    started = time.monotonic()
    body = await get_json(client, agent_thread.thread_id, wait=str(HELD_WAIT_S))
    assert time.monotonic() - started < NOT_HELD_S
    assert body["complete"] is True
    assert body["content"] == expected_answer(await agent_thread.state())


async def test_wait_on_running_thread_times_out(
    client: httpx.AsyncClient, paused_thread: SeededThread
) -> None:
    started = time.monotonic()
    body = await get_json(client, paused_thread.thread_id, wait="0.4")
    elapsed = time.monotonic() - started
    assert 0.4 <= elapsed < 3
    assert body["complete"] is False


async def test_wait_returns_when_the_run_finishes(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    gate = asyncio.Event()
    graph = node_graph(
        seeder.saver,
        [("first", lambda s: {"messages": [AIMessage("working")]}), ("slow", gated(gate, "fin"))],
    )
    thread = seeder.thread(graph)
    run = asyncio.create_task(seeder.run(thread, {"messages": [HumanMessage("go")]}))
    await wait_for_next(thread, ("slow",))
    started = time.monotonic()
    held = asyncio.create_task(get_json(client, thread.thread_id, wait="20"))
    await asyncio.sleep(0.3)
    assert not held.done()  # held while the run executes
    gate.set()
    await run
    body = await asyncio.wait_for(held, 5)
    assert time.monotonic() - started < 5
    assert body["complete"] is True and body["status"] == "success"
    assert body["content"] == expected_answer(await thread.state()) == "fin"


async def test_wait_with_if_none_match_returns_on_change(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    """A long-poll with the current ETag returns as soon as the answer changes, even
    before the run completes."""
    first_gate, second_gate = asyncio.Event(), asyncio.Event()
    graph = node_graph(
        seeder.saver,
        [
            ("one", lambda s: {"messages": [AIMessage("part one")]}),
            ("two", gated(first_gate, "part two")),
            ("three", gated(second_gate, "part three")),
        ],
    )
    thread = seeder.thread(graph)
    run = asyncio.create_task(seeder.run(thread, {"messages": [HumanMessage("go")]}))
    try:
        await wait_for_next(thread, ("two",))
        current = await get(client, thread.thread_id)
        etag = current.headers["etag"]
        held = asyncio.create_task(
            get(client, thread.thread_id, headers={"If-None-Match": etag}, wait="20")
        )
        await asyncio.sleep(0.3)
        assert not held.done()
        first_gate.set()
        response = await asyncio.wait_for(held, 5)
        assert response.status_code == 200
        body = response.json()
        assert body["complete"] is False
        assert body["content"] == "part two"
        assert response.headers["etag"] != etag
    finally:
        first_gate.set()
        second_gate.set()
        await run


async def test_wait_with_matching_etag_ends_in_304(
    client: httpx.AsyncClient, paused_thread: SeededThread
) -> None:
    etag = (await get(client, paused_thread.thread_id)).headers["etag"]
    response = await get(
        client, paused_thread.thread_id, headers={"If-None-Match": etag}, wait="0.3"
    )
    assert response.status_code == 304
    assert response.headers["etag"] == etag


async def test_wait_for_a_pending_run_id(client: httpx.AsyncClient, seeder: Seeder) -> None:
    """``?run_id=`` of a run not written yet: pending until its checkpoints appear."""
    thread = await seeder.chat(["old answer", "new answer"], questions=["q1"])
    run_id = new_run_id()
    held = asyncio.create_task(get_json(client, thread.thread_id, run_id=run_id, wait="20"))
    await asyncio.sleep(0.3)
    assert not held.done()
    await seeder.run(thread, {"messages": [HumanMessage("q2")]}, run_id=run_id)
    body = await asyncio.wait_for(held, 5)
    assert body["run_id"] == run_id and body["status"] == "success"
    assert body["content"] == expected_answer(thread.snapshots[run_id]) == "new answer"


# ------------------------------------------------------------------ the app as deployed


async def test_default_app_serves_the_data_dir_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``create_app()`` with its default factory reads ``$EVOSCIENTIST_DATA_DIR/sessions.db``
    written through the project's own checkpointer factory (``langgraph.json``)."""
    monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(tmp_path / "evo"))
    monkeypatch.delenv("EVOSCIENTIST_LANGGRAPH_URL", raising=False)
    monkeypatch.delenv("EVOSCIENTIST_AGENT_NAME", raising=False)
    async with sessions_checkpointer() as saver:
        seeder = Seeder(tmp_path / "evo" / "sessions.db", saver)
        thread = await seeder.agent(("Deployed?",))
        expected = await thread.expected()

        app = create_app()
        async with serving(app) as client:
            body = await get_json(client, thread.thread_id)
            assert body["content"] == expected
            assert body["source"] == "checkpointer"
            service = app.state.final_answer.current()
            assert service.api is None  # standalone, no fallback URL configured
            assert service.direct._conn is not None
        assert service.direct._conn is None  # closed by the app's lifespan


# ------------------------------------------------------------------ known limitation


async def test_resumed_run_still_executing_is_running(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    gate = asyncio.Event()

    async def ask(state: dict[str, Any]) -> dict[str, Any]:
        reply = interrupt("go ahead?")
        await gate.wait()
        return {"messages": [AIMessage(f"went ahead: {reply}")]}

    thread = seeder.thread(node_graph(seeder.saver, [("ask", ask)]))
    await seeder.run(thread, {"messages": [HumanMessage("start")]})
    assert (await get_json(client, thread.thread_id))["status"] == "interrupted"
    run = asyncio.create_task(seeder.run(thread, resume("yes")))
    try:
        for _ in range(500):  # until the resume is recorded and the node runs again
            tup = await seeder.saver.aget_tuple(thread.config)
            if any(write[1] == "__resume__" for write in tup.pending_writes):
                break
            await asyncio.sleep(0.01)
        body = await get_json(client, thread.thread_id)
        assert body["status"] == "running" and body["complete"] is False
    finally:
        gate.set()
        await run


async def test_second_interrupt_of_a_node_waits_and_its_resume_runs(
    client: httpx.AsyncClient, seeder: Seeder
) -> None:
    """One node asking twice: after the first answer it waits again (interrupted, on the
    same checkpoint, with the first resume still stored); after the second it runs."""
    gate = asyncio.Event()

    async def ask_twice(state: dict[str, Any]) -> dict[str, Any]:
        first = interrupt("first?")
        second = interrupt("second?")
        await gate.wait()
        return {"messages": [AIMessage(f"{first} then {second}")]}

    thread = seeder.thread(node_graph(seeder.saver, [("ask", ask_twice)]))
    await seeder.run(thread, {"messages": [HumanMessage("start")]})
    await seeder.run(thread, resume("A"))
    waiting = await get_json(client, thread.thread_id)
    assert waiting["status"] == "interrupted" and waiting["complete"] is True
    assert [entry["value"] for entry in waiting["interrupts"]] == ["second?"]

    run = asyncio.create_task(seeder.run(thread, resume("B")))
    try:
        for _ in range(500):  # until the second resume is stored
            tup = await seeder.saver.aget_tuple(thread.config)
            if any(w[1] == "__resume__" and w[2] == "B" for w in tup.pending_writes):
                break
            await asyncio.sleep(0.01)
        running = await get_json(client, thread.thread_id)
        assert running["status"] == "running" and running["complete"] is False
    finally:
        gate.set()
        await run
    done = await get_json(client, thread.thread_id)
    assert done["status"] == "success" and done["content"] == "A then B"


@pytest.mark.parametrize("content", [b"", None], ids=["empty-file", "no-checkpoints-table"])
async def test_a_store_nothing_wrote_to_has_no_threads(
    tmp_path: Path, content: bytes | None
) -> None:
    import sqlite3

    db = tmp_path / "sessions.db"
    if content is None:
        with sqlite3.connect(db) as conn:  # a SQLite file, but not a checkpointer's
            conn.execute("CREATE TABLE notes (body TEXT)")
        conn.close()
    else:
        db.write_bytes(content)
    before = db.read_bytes()
    async with answer_client(db) as client:
        response = await get(client, hex8_thread_id())
    assert_error(response, 404, "thread_not_found", retryable=False)
    assert db.read_bytes() == before


async def test_an_encoded_slash_in_the_id_is_an_invalid_request(
    client: httpx.AsyncClient, agent_thread: SeededThread
) -> None:
    response = await client.get("/api/threads/a%2Fb/final-answer")
    assert_error(response, 422, "invalid_request", retryable=False)
    assert "thread_id" in response.json()["detail"]
