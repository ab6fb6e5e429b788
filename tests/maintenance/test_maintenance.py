"""Store maintenance on the factory's savers, both backends: ``aprune``,
``adelete_for_runs``, ``acopy_thread`` on threads written by real graphs, the route
answering before and after (``DeltaChannel`` threads included).

The end-to-end half (no start-up warning, ``POST /threads/{id}/copy`` answered) is in
``tests/e2e/test_langgraph_dev.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from tests.support.factory_saver import factory_saver
from tests.support.seeds import (
    DELTA_PREAMBLE,
    SeededThread,
    Seeder,
    Store,
    expected_answer,
    route,
    uuid_thread_id,
)

pytestmark = pytest.mark.backends("sqlite", "postgres")


@pytest.fixture
async def saver(
    store: Store, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BaseCheckpointSaver]:
    async with factory_saver(store, monkeypatch) as saver:
        yield saver


async def answers(client: httpx.AsyncClient, threads: list[SeededThread]) -> dict[str, Any]:
    return {t.thread_id: (await client.get(route(t.thread_id))).json() for t in threads}


async def checkpoint_ids(saver: BaseCheckpointSaver, thread_id: str) -> list[str]:
    config = {"configurable": {"thread_id": thread_id}}
    return [t.config["configurable"]["checkpoint_id"] async for t in saver.alist(config)]


async def test_the_factory_savers_implement_what_langgraph_api_asks(
    saver: BaseCheckpointSaver,
) -> None:
    # langgraph-api's rule (``_checkpointer._adapter._is_overridden``, not importable
    # outside a server): a method counts when the class overrides the base's.
    for method in ("aprune", "adelete_for_runs", "acopy_thread", "adelete_thread"):
        assert getattr(type(saver), method) is not getattr(BaseCheckpointSaver, method), method


async def test_keep_latest_leaves_every_thread_answered_exactly(
    scenario_threads: list[SeededThread],
    saver: BaseCheckpointSaver,
    client: httpx.AsyncClient,
) -> None:
    before = await answers(client, scenario_threads)
    values = {t.thread_id: (await t.state()).values for t in scenario_threads}
    counts = {t.thread_id: len(await checkpoint_ids(saver, t.thread_id)) for t in scenario_threads}

    await saver.aprune([t.thread_id for t in scenario_threads], strategy="keep_latest")

    assert await answers(client, scenario_threads) == before
    for thread in scenario_threads:
        assert (await thread.state()).values == values[thread.thread_id], thread.label
    after = {t.thread_id: len(await checkpoint_ids(saver, t.thread_id)) for t in scenario_threads}
    assert all(after[t] <= counts[t] for t in counts)
    assert sum(after.values()) < sum(counts.values())


async def test_keep_latest_keeps_the_chain_back_to_the_delta_snapshot_only(
    seeder: Seeder, saver: BaseCheckpointSaver, client: httpx.AsyncClient
) -> None:
    # Snapshots every other update: many turns leave old checkpoints no load reads; the
    # preamble's two updates leave the head one past a snapshot.
    thread = await seeder.chat(
        [f"delta answer {i}" for i in range(6)], mode="delta", preamble=DELTA_PREAMBLE
    )
    before = await answers(client, [thread])
    ids = await checkpoint_ids(saver, thread.thread_id)

    await saver.aprune([thread.thread_id])

    kept = await checkpoint_ids(saver, thread.thread_id)
    assert kept[0] == ids[0]  # the head
    assert 1 < len(kept) < len(ids)
    configurable = {"thread_id": thread.thread_id, "checkpoint_ns": "", "checkpoint_id": kept[-1]}
    oldest = await saver.aget_tuple({"configurable": configurable})
    assert oldest is not None
    assert "messages" in oldest.checkpoint["channel_values"]  # the snapshot it seeds from
    assert oldest.parent_config is None
    assert await answers(client, [thread]) == before
    assert expected_answer(await thread.state()) == "delta answer 5"


async def test_keep_latest_keeps_one_checkpoint_of_a_plain_thread(
    seeder: Seeder, saver: BaseCheckpointSaver, client: httpx.AsyncClient
) -> None:
    thread = await seeder.chat(["one", "two", "three"])
    before = await answers(client, [thread])

    await saver.aprune([thread.thread_id], strategy="keep_latest")

    assert len(await checkpoint_ids(saver, thread.thread_id)) == 1
    assert await answers(client, [thread]) == before


async def test_delete_strategy_removes_the_threads(
    seeder: Seeder, saver: BaseCheckpointSaver, client: httpx.AsyncClient
) -> None:
    gone, kept = await seeder.agent(), await seeder.chat(["stays"])

    await saver.aprune([gone.thread_id], strategy="delete")

    assert await checkpoint_ids(saver, gone.thread_id) == []
    assert (await client.get(route(gone.thread_id))).status_code == 404
    assert (await client.get(route(kept.thread_id))).json()["content"] == "stays"


async def test_prune_arguments_are_checked_as_langgraph_checks_them(
    saver: BaseCheckpointSaver,
) -> None:
    with pytest.raises(TypeError):
        await saver.aprune("a-thread-id")
    with pytest.raises(ValueError, match="Unknown prune strategy"):
        await saver.aprune(["a-thread-id"], strategy="keep_oldest")
    await saver.aprune([])


async def test_delete_for_runs_rolls_the_thread_back_to_the_run_before(
    seeder: Seeder, saver: BaseCheckpointSaver, client: httpx.AsyncClient
) -> None:
    thread = await seeder.agent(("First question?", "Second question?"))
    other = await seeder.agent(("Untouched?",))
    untouched = await answers(client, [other])
    first, second = thread.run_ids

    await saver.adelete_for_runs([second])

    body = (await client.get(route(thread.thread_id))).json()
    assert body["run_id"] == first
    assert body["content"] == expected_answer(thread.snapshots[first])
    assert (await thread.state()).values == thread.snapshots[first].values
    assert await answers(client, [other]) == untouched


async def test_copy_thread_answers_as_the_source(
    seeder: Seeder, saver: BaseCheckpointSaver, client: httpx.AsyncClient
) -> None:
    source = await seeder.agent(("How do I test a hypothesis?", "And report it?"))
    target = uuid_thread_id()

    await saver.acopy_thread(source.thread_id, target)

    assert await checkpoint_ids(saver, target) == await checkpoint_ids(saver, source.thread_id)
    original = (await client.get(route(source.thread_id))).json()
    copy = (await client.get(route(target))).json()
    assert {**copy, "thread_id": source.thread_id} == original
    copied_state = await source.graph.aget_state({"configurable": {"thread_id": target}})
    assert copied_state.values == (await source.state()).values


async def test_a_pruned_copy_still_answers(
    seeder: Seeder, saver: BaseCheckpointSaver, client: httpx.AsyncClient
) -> None:
    """Copy then prune the copy: the source keeps its whole history."""
    source = await seeder.delta_compacted()
    target = uuid_thread_id()
    await saver.acopy_thread(source.thread_id, target)
    history = await checkpoint_ids(saver, source.thread_id)

    await saver.aprune([target])

    assert await checkpoint_ids(saver, source.thread_id) == history
    assert (await client.get(route(target))).json()["content"] == await source.expected()
