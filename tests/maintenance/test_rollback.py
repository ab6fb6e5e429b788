"""``adelete_for_runs`` of a run that is not the newest, and a rollback after a prune,
on both stores and on plain and ``DeltaChannel`` threads: every surviving checkpoint
decodes as langgraph decoded it before, the chain stays whole, and the route answers.
(``maintenance.rollback``; the random interleavings are in
``tests/maintenance/test_invariant.py``.)"""

from __future__ import annotations

import operator
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any

import httpx
import pytest
from langchain_core.messages import HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from evoscientist_final_answer.maintenance.rollback import MaintenanceRefused
from tests.maintenance.oracle import assert_decodes_unchanged, decode_all, run_ids, stored
from tests.support.factory_saver import factory_saver
from tests.support.seeds import (
    DELTA_PREAMBLE,
    MessagesMode,
    SeededThread,
    Seeder,
    Store,
    answer,
    expected_answer,
    node_graph,
    route,
)

pytestmark = pytest.mark.backends("sqlite", "postgres")


@pytest.fixture
async def saver(
    store: Store, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BaseCheckpointSaver]:
    """The saver ``langgraph.json``'s factory yields for ``store``."""
    async with factory_saver(store, monkeypatch) as saver:
        yield saver


async def six_turns(seeder: Seeder, mode: MessagesMode) -> SeededThread:
    # The preamble moves the DeltaChannel's snapshots (every other update) off the
    # checkpoints that end each turn, so the later turns rebuild from older writes.
    preamble = DELTA_PREAMBLE if mode == "delta" else ()
    replies = [f"answer {i}" for i in range(6)]
    return await seeder.chat(replies, mode=mode, preamble=preamble)


@pytest.mark.parametrize("mode", ["add_messages", "delta"])
@pytest.mark.parametrize("middle", [[1], [3], [1, 3], [0, 4]])
async def test_deleting_older_runs_changes_no_surviving_checkpoint(
    seeder: Seeder,
    saver: BaseCheckpointSaver,
    client: httpx.AsyncClient,
    mode: MessagesMode,
    middle: Sequence[int],
) -> None:
    thread = await six_turns(seeder, mode)
    before = await decode_all(thread.graph, saver, thread.thread_id)
    body = (await client.get(route(thread.thread_id))).json()
    deleted = {thread.run_ids[i] for i in middle}
    owners = await run_ids(saver, thread.thread_id)

    await saver.adelete_for_runs(sorted(deleted))

    left = await assert_decodes_unchanged(thread.graph, saver, thread.thread_id, before)
    assert set(left) == {c for c, run in owners.items() if run not in deleted}
    assert (await client.get(route(thread.thread_id))).json() == body
    # The next turn runs on the whole history.
    head = before[max(left)][0]["messages"]
    graph = node_graph(seeder.saver, [("agent", answer("one more answer"))], mode=mode)
    await seeder.run(thread, {"messages": [HumanMessage("one more")]}, graph=graph)
    assert (await thread.state()).values["messages"][: len(head)] == head


async def test_the_agent_keeps_its_history_when_an_older_turn_is_deleted(
    seeder: Seeder, saver: BaseCheckpointSaver, client: httpx.AsyncClient
) -> None:
    thread = await seeder.agent([f"turn {i}" for i in range(4)])
    before = await decode_all(thread.graph, saver, thread.thread_id)
    head = (await thread.state()).values["messages"]

    await saver.adelete_for_runs([thread.run_ids[1]])

    await assert_decodes_unchanged(thread.graph, saver, thread.thread_id, before)
    assert (await thread.state()).values["messages"] == head
    body = (await client.get(route(thread.thread_id))).json()
    assert body["status"] == "success"
    assert body["content"] == expected_answer(thread.snapshots[thread.last_run_id])


@pytest.mark.parametrize("mode", ["add_messages", "delta"])
async def test_prune_during_a_run_then_its_rollback_leaves_the_previous_turn(
    seeder: Seeder,
    saver: BaseCheckpointSaver,
    client: httpx.AsyncClient,
    mode: MessagesMode,
) -> None:
    thread = await six_turns(seeder, mode)
    finished = (await client.get(route(thread.thread_id))).json()
    # A run stopped with ``next`` pending, as one in flight is (it wrote its input
    # checkpoint and a snapshot of the messages).
    paused = _scripted_pause(seeder, mode)
    in_flight = await seeder.run(thread, {"messages": [HumanMessage("in flight")]}, graph=paused)
    assert (await thread.state()).next
    before = await decode_all(thread.graph, saver, thread.thread_id)

    await saver.aprune([thread.thread_id], strategy="keep_latest")
    await assert_decodes_unchanged(thread.graph, saver, thread.thread_id, before)
    await saver.adelete_for_runs([in_flight])

    left = await assert_decodes_unchanged(thread.graph, saver, thread.thread_id, before)
    assert left
    assert (await client.get(route(thread.thread_id))).json() == finished
    assert (await thread.state()).values == thread.snapshots[thread.run_ids[-2]].values


def _scripted_pause(seeder: Seeder, mode: MessagesMode) -> Any:
    """A graph that answers, then stops before a second node."""
    nodes = [("draft", answer("draft")), ("review", answer("reviewed"))]
    return node_graph(seeder.saver, nodes, mode=mode, interrupt_before=["review"])


async def test_prune_of_a_finished_thread_keeps_no_extra_checkpoint(
    seeder: Seeder, saver: BaseCheckpointSaver
) -> None:
    thread = await six_turns(seeder, "add_messages")

    await saver.aprune([thread.thread_id])

    assert list(await stored(saver, thread.thread_id)) == [
        thread.snapshots[thread.last_run_id].config["configurable"]["checkpoint_id"]
    ]


class NotesState(TypedDict):
    notes: Annotated[list[str], DeltaChannel(operator.add, snapshot_frequency=50)]


def notes_graph(saver: BaseCheckpointSaver) -> Any:
    async def note(state: dict[str, Any]) -> dict[str, Any]:
        return {"notes": [f"note {len(state['notes'])}"]}

    builder = StateGraph(NotesState)
    builder.add_node("note", note)
    builder.add_edge(START, "note")
    return builder.compile(checkpointer=saver)


async def test_a_channel_it_cannot_rebuild_is_refused_and_nothing_deleted(
    seeder: Seeder, saver: BaseCheckpointSaver
) -> None:
    thread = seeder.thread(notes_graph(seeder.saver))
    for i in range(3):
        await seeder.run(thread, {"notes": [f"input {i}"]})
    before = await stored(saver, thread.thread_id)

    with pytest.raises(MaintenanceRefused, match="notes"):
        await saver.adelete_for_runs([thread.run_ids[1]])

    assert await stored(saver, thread.thread_id) == before
    # The newest run has nothing after it: its rollback needs no reducer.
    await saver.adelete_for_runs([thread.run_ids[2]])
    assert (await thread.state()).values == thread.snapshots[thread.run_ids[1]].values
