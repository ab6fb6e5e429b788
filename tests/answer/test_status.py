"""``answer.status``: where a run stands, from a checkpoint alone (no graph), held
against ``aget_state`` at every root checkpoint of real threads."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.types import Interrupt, Send
from typing_extensions import TypedDict

from evoscientist_final_answer.answer.status import (
    MAX_ERROR_MESSAGE,
    RunState,
    RunStatus,
    describe_exception,
    error_from_writes,
    interrupt_entry,
    next_nodes,
    overlay_thread_status,
    run_error,
    state_from_checkpoint,
)
from tests.support.seeds import AddMessagesState, SeededThread, Seeder, answer, join_graph

# ------------------------------------------------------------------ graphs


def plus_join_graph(seeder: Seeder, *, defer: bool):
    """Branches of unequal length meeting in ``join``; a node name with ``+`` in it."""
    builder = StateGraph(AddMessagesState)
    builder.add_node("a", answer("a"))
    builder.add_node("b1", answer("b1"))
    builder.add_node("b+2", answer("b+2"))
    builder.add_node("join", answer("joined"), defer=defer)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b1")
    builder.add_edge("b1", "b+2")
    builder.add_edge(["a", "b+2"], "join")
    return builder.compile(checkpointer=seeder.saver)


class FanOutState(TypedDict):
    topics: list[str]
    notes: Annotated[list[str], operator.add]


def send_graph(seeder: Seeder, **compile_kwargs: Any):
    """Map-reduce with ``Send``: pending work lives in ``__pregel_tasks``."""

    def fan_out(state: FanOutState) -> list[Send]:
        return [Send("worker", {"topics": [topic], "notes": []}) for topic in state["topics"]]

    def worker(state: FanOutState) -> dict[str, Any]:
        return {"notes": [f"note on {state['topics'][0]}"]}

    builder = StateGraph(FanOutState)
    builder.add_node("worker", worker)
    builder.add_conditional_edges(START, fan_out, ["worker"])
    return builder.compile(checkpointer=seeder.saver, **compile_kwargs)


async def history(seeder: Seeder, thread: SeededThread):
    config = {"configurable": {"thread_id": thread.thread_id, "checkpoint_ns": ""}}
    tuples = [tup async for tup in seeder.saver.alist(config)]
    return [(tup, await thread.graph_at(tup.metadata).aget_state(tup.config)) for tup in tuples]


async def seeded_threads(seeder: Seeder) -> list[SeededThread]:
    threads = await seeder.every_scenario()
    for defer in (False, True):
        for durability in ("sync", "async"):
            thread = seeder.thread(
                plus_join_graph(seeder, defer=defer), label=f"join defer={defer} {durability}"
            )
            await seeder.run(thread, {"messages": [HumanMessage("go")]}, durability=durability)
            threads.append(thread)
    paused_join = seeder.thread(
        join_graph(seeder.saver, interrupt_before=["summary"]), label="join paused"
    )
    await seeder.run(paused_join, {"messages": [HumanMessage("go")]})
    threads.append(paused_join)
    threads.append(await seeder.input_not_yet_applied())
    return threads


# ------------------------------------------------------------------ next_nodes


async def test_next_nodes_matches_aget_state_at_every_checkpoint(seeder: Seeder) -> None:
    checked = 0
    for thread in await seeded_threads(seeder):
        for tup, snapshot in await history(seeder, thread):
            pending = next_nodes(tup.checkpoint["channel_values"])
            assert set(pending) == set(snapshot.next), (thread.label, tup.metadata)
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("defer", [False, True])
async def test_partly_filled_join_barrier_is_not_pending(seeder: Seeder, defer: bool) -> None:
    thread = seeder.thread(plus_join_graph(seeder, defer=defer))
    await seeder.run(thread, {"messages": [HumanMessage("go")]}, durability="sync")
    partial = 0
    for tup, snapshot in await history(seeder, thread):
        values = tup.checkpoint["channel_values"]
        barrier = values.get("join:a+b+2:join")
        seen = barrier[0] if isinstance(barrier, list | tuple) else barrier
        if seen == {"a"}:
            partial += 1
            assert snapshot.next == ("b+2",)
            assert next_nodes(values) == ("b+2",)
    assert partial == 1


async def test_join_barrier_is_the_only_trace_of_the_pending_node(seeder: Seeder) -> None:
    thread = seeder.thread(join_graph(seeder.saver, interrupt_before=["summary"]))
    await seeder.run(thread, {"messages": [HumanMessage("go")]})
    snapshot = await thread.state()
    assert snapshot.next == ("summary",)
    tup = await seeder.saver.aget_tuple(thread.config)
    values = tup.checkpoint["channel_values"]
    assert not any(name.startswith("branch:to:") for name in values)
    assert next_nodes(values) == ("summary",)
    assert state_from_checkpoint(values, tup.pending_writes).status is RunStatus.RUNNING


async def test_send_packets_count_as_pending(seeder: Seeder) -> None:
    thread = seeder.thread(send_graph(seeder, interrupt_before=["worker"]))
    await seeder.run(thread, {"topics": ["x", "y"], "notes": []})
    snapshot = await thread.state()
    assert snapshot.next == ("worker", "worker")
    tup = await seeder.saver.aget_tuple(thread.config)
    assert next_nodes(tup.checkpoint["channel_values"])
    assert state_from_checkpoint(tup.checkpoint["channel_values"], []).status is RunStatus.RUNNING

    await seeder.run(thread, None)
    tup = await seeder.saver.aget_tuple(thread.config)
    assert (await thread.state()).next == ()
    assert next_nodes(tup.checkpoint["channel_values"]) == ()


# ------------------------------------------------------------------ state_from_checkpoint


async def test_state_from_checkpoint_matches_aget_state(seeder: Seeder) -> None:
    for thread in await seeded_threads(seeder):
        tup = await seeder.saver.aget_tuple(thread.config)
        snapshot = await thread.state()
        state = state_from_checkpoint(tup.checkpoint["channel_values"], tup.pending_writes or [])
        errors = [task.error for task in snapshot.tasks if task.error]
        if errors:
            assert state.status is RunStatus.ERROR, thread.label
            assert state.error == {
                "code": "run_failed",
                "message": describe_exception(errors[0])[1],
                "retryable": False,
            }
            assert errors[0] == "RuntimeError('kaboom')"  # what langgraph stores
            assert state.error["message"] == "RuntimeError: kaboom"
        elif snapshot.interrupts:
            assert state.status is RunStatus.INTERRUPTED, thread.label
            assert state.interrupts == [{"id": i.id, "value": i.value} for i in snapshot.interrupts]
        elif snapshot.next:
            assert state.status is RunStatus.RUNNING, thread.label
        else:
            assert state.status is RunStatus.SUCCESS, thread.label
        if state.status is not RunStatus.ERROR:
            assert state.error is None
        if state.status is not RunStatus.INTERRUPTED:
            assert state.interrupts == []


async def test_several_interrupts_are_all_listed(seeder: Seeder) -> None:
    from langgraph.types import interrupt

    def ask_twice(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage(str(interrupt("first?")))]}

    builder = StateGraph(AddMessagesState)
    builder.add_node("left", ask_twice)
    builder.add_node("right", lambda s: {"messages": [AIMessage(str(interrupt("second?")))]})
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    thread = seeder.thread(builder.compile(checkpointer=seeder.saver))
    await seeder.run(thread, {"messages": [HumanMessage("go")]})
    snapshot = await thread.state()
    tup = await seeder.saver.aget_tuple(thread.config)
    state = state_from_checkpoint(tup.checkpoint["channel_values"], tup.pending_writes)
    assert state.status is RunStatus.INTERRUPTED
    assert sorted(i["value"] for i in state.interrupts) == ["first?", "second?"]
    assert {i["id"] for i in state.interrupts} == {i.id for i in snapshot.interrupts}


def test_error_wins_over_interrupt_and_pending_nodes() -> None:
    writes = [
        ("t1", "__interrupt__", [Interrupt(value="q", id="i1")]),
        ("t2", "__error__", "ValueError('bad')"),
    ]
    state = state_from_checkpoint({"branch:to:agent": None}, writes)
    assert state.status is RunStatus.ERROR
    assert state.error == {"code": "run_failed", "message": "ValueError: bad", "retryable": False}


@pytest.mark.parametrize(
    ("written", "name", "text"),
    [
        ("RuntimeError('kaboom')", "RuntimeError", "RuntimeError: kaboom"),
        ("ValueError('a', 2)", "ValueError", "ValueError: a, 2"),
        ("CancelledError()", "CancelledError", "CancelledError"),
        ("KeyError(\"'x'\")", "KeyError", "KeyError: 'x'"),
        ("httpx.ReadTimeout('slow')", "httpx.ReadTimeout", "httpx.ReadTimeout: slow"),
        ("Weird(<object at 0x1>)", "Weird", "Weird(<object at 0x1>)"),
        ("not a repr", None, "not a repr"),
        (RuntimeError("live"), "RuntimeError", "RuntimeError: live"),
        # LangGraph's JavaScript server, read through its API (a sidecar)
        ('{"message":"down","name":"Error"}', "Error", "Error: down"),
        ({"message": "down", "name": "TypeError"}, "TypeError", "TypeError: down"),
        ('{"message":"no name"}', None, "no name"),
        ("{not json", None, "{not json"),
    ],
)
def test_describe_exception(written: Any, name: str | None, text: str) -> None:
    assert describe_exception(written) == (name, text)


def test_a_cancelled_task_is_a_cancelled_run_unless_another_failed() -> None:
    aborted = '{"message":"Aborted","name":"AbortError"}'  # the JS server's
    for cancelled in ("CancelledError()", "NodeCancelledError('agent')", aborted):
        assert error_from_writes([cancelled])["code"] == "run_cancelled"
        assert error_from_writes([cancelled])["retryable"] is False
        # langgraph cancels the siblings of a failing task: the failure is the answer.
        failed = error_from_writes([cancelled, "RuntimeError('x')"])
        assert failed == {"code": "run_failed", "message": "RuntimeError: x", "retryable": False}


def test_run_error_truncates_long_messages() -> None:
    error = run_error("run_failed", "x" * (MAX_ERROR_MESSAGE + 500), retryable=False)
    assert len(error["message"]) == MAX_ERROR_MESSAGE


def test_interrupt_entry_accepts_objects_and_json() -> None:
    assert interrupt_entry(Interrupt(value={"a": 1}, id="abc")) == {"id": "abc", "value": {"a": 1}}
    assert interrupt_entry({"id": "abc", "value": [1, 2], "when": "during"}) == {
        "id": "abc",
        "value": [1, 2],
    }


def test_complete_statuses() -> None:
    assert {s for s in RunStatus if s.complete} == {
        RunStatus.SUCCESS,
        RunStatus.ERROR,
        RunStatus.INTERRUPTED,
    }


# ------------------------------------------------------------------ server's view


SUCCESS = RunState(RunStatus.SUCCESS)
RUNNING = RunState(RunStatus.RUNNING)
INTERRUPTED = RunState(RunStatus.INTERRUPTED, interrupts=[{"id": "i", "value": "v"}])
ERROR = RunState(RunStatus.ERROR, error=run_error("run_failed", "boom", retryable=False))


@pytest.mark.parametrize(
    ("state", "thread_status", "expected"),
    [
        (SUCCESS, None, RunStatus.SUCCESS),
        (RUNNING, None, RunStatus.RUNNING),
        (SUCCESS, "busy", RunStatus.RUNNING),
        (INTERRUPTED, "busy", RunStatus.RUNNING),
        (ERROR, "busy", RunStatus.RUNNING),
        (RUNNING, "busy", RunStatus.RUNNING),
        (SUCCESS, "idle", RunStatus.SUCCESS),
        (INTERRUPTED, "idle", RunStatus.INTERRUPTED),
        (RUNNING, "idle", RunStatus.ERROR),
        (SUCCESS, "error", RunStatus.ERROR),
        (RUNNING, "error", RunStatus.ERROR),
        (ERROR, "error", RunStatus.ERROR),
        (RUNNING, "interrupted", RunStatus.INTERRUPTED),
        (INTERRUPTED, "interrupted", RunStatus.INTERRUPTED),
    ],
)
def test_overlay_thread_status(state: RunState, thread_status: str | None, expected) -> None:
    result = overlay_thread_status(state, thread_status)
    assert result.status is expected
    if expected is RunStatus.ERROR:
        assert set(result.error) == {"code", "message", "retryable"}
    if state.status is expected:
        assert result == state  # nothing the server said changes a consistent view


def test_idle_thread_with_unfinished_run_is_a_retryable_stop() -> None:
    result = overlay_thread_status(RUNNING, "idle")
    assert result.error["code"] == "run_stopped"
    assert result.error["retryable"] is True
