"""``store.messages``: a checkpoint's messages rebuilt without the graph, at every root
checkpoint of real threads, equal to what ``aget_state`` shows for that checkpoint —
through ``AsyncSqliteSaver`` and ``AsyncPostgresSaver`` (whose DeltaChannel history is
its own two-stage query)."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.base import CheckpointTuple

from evoscientist_final_answer.store.messages import checkpoint_messages, is_delta_channel
from tests.support.seeds import DELTA_PREAMBLE, SeededThread, Seeder

pytestmark = pytest.mark.backends("sqlite", "postgres")


async def root_tuples(seeder: Seeder, thread: SeededThread) -> list[CheckpointTuple]:
    config = {"configurable": {"thread_id": thread.thread_id, "checkpoint_ns": ""}}
    # Collected first: the saver's lock is held while ``alist`` iterates.
    return [tup async for tup in seeder.saver.alist(config)]


async def assert_every_checkpoint_matches(seeder: Seeder, thread: SeededThread) -> int:
    rebuilt_from_writes = 0
    for tup in await root_tuples(seeder, thread):
        snapshot = await thread.graph_at(tup.metadata).aget_state(tup.config)
        messages = await checkpoint_messages(seeder.saver, tup)
        assert messages == snapshot.values.get("messages", []), tup.metadata
        if "messages" not in tup.checkpoint["channel_values"] and messages:
            rebuilt_from_writes += 1
    return rebuilt_from_writes


@pytest.mark.parametrize("how", ["remove", "overwrite"])
async def test_delta_channel_every_checkpoint(seeder: Seeder, how: str) -> None:
    thread = await seeder.delta_compacted(turns=6, how=how)
    assert await assert_every_checkpoint_matches(seeder, thread) > 10


async def test_delta_channel_checkpoints_are_recognised(seeder: Seeder) -> None:
    thread = await seeder.chat(["a", "b", "c"], mode="delta", preamble=DELTA_PREAMBLE)
    tuples = await root_tuples(seeder, thread)
    without_messages = [t for t in tuples if "messages" not in t.checkpoint["channel_values"]]
    assert without_messages
    assert all(is_delta_channel(t.metadata) for t in without_messages)


async def test_project_agent_every_checkpoint(seeder: Seeder) -> None:
    thread = await seeder.agent(("first?", "second?", "third?"))
    assert await assert_every_checkpoint_matches(seeder, thread) > 5


async def test_add_messages_every_checkpoint(seeder: Seeder) -> None:
    thread = await seeder.chat(["a", "b", "c"], mode="add_messages")
    tuples = await root_tuples(seeder, thread)
    assert not any(is_delta_channel(t.metadata) for t in tuples)
    assert await assert_every_checkpoint_matches(seeder, thread) == 0


async def test_interrupt_and_error_threads_every_checkpoint(seeder: Seeder) -> None:
    for thread in (await seeder.interrupted("ok?"), await seeder.failed("boom")):
        await assert_every_checkpoint_matches(seeder, thread)
