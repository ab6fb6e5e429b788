"""The lazy decoder against the saver's full decode, on every root checkpoint of real
threads: same answer, same status, same everything, or an explicit hand-over to the
full decode (``lazy.Unexpected``) for the shapes it leaves alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store import delta, lazy, value_end
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.postgres import parts as postgres_parts
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import SeededThread, Seeder, Store


async def root_checkpoint_ids(seeder: Seeder, thread: SeededThread) -> list[str]:
    config = {"configurable": {"thread_id": thread.thread_id, "checkpoint_ns": ""}}
    return [tup.checkpoint["id"] async for tup in seeder.saver.alist(config)]


async def decode_both(
    reader: CheckpointAnswerReader, thread_id: str, checkpoint_id: str
) -> tuple[FinalAnswer, FinalAnswer | None]:
    """(the saver's full decode, the lazy decode or None when it hands over)."""
    if isinstance(reader, SqliteAnswerReader):
        saver = await reader._open()
        full = await reader.full_answer(saver, thread_id, checkpoint_id)
        try:
            return full, await reader.lazy_answer(saver, thread_id, checkpoint_id)
        except lazy.Unexpected:
            return full, None
    assert isinstance(reader, PostgresAnswerReader)
    async with reader._db.session() as conn, conn.transaction():
        pg_saver = AsyncPostgresSaver(conn)
        full = await reader.full_answer(pg_saver, thread_id, checkpoint_id)
        try:
            return full, await reader.lazy_answer(pg_saver, thread_id, checkpoint_id)
        except lazy.Unexpected:
            return full, None


async def compare_every_checkpoint(
    store: Store, seeder: Seeder, threads: list[SeededThread]
) -> tuple[int, int]:
    """(checkpoints decoded lazily, checkpoints handed to the full decode)."""
    reader = store.reader()
    lazily = handed_over = 0
    try:
        for thread in threads:
            for checkpoint_id in await root_checkpoint_ids(seeder, thread):
                full, fast = await decode_both(reader, thread.thread_id, checkpoint_id)
                if fast is None:
                    handed_over += 1
                    continue
                assert fast == full, (thread.label, checkpoint_id)
                lazily += 1
    finally:
        await reader.close()
    return lazily, handed_over


@pytest.mark.backends("sqlite", "postgres")
async def test_every_scenario_decodes_the_same(
    store: Store, seeder: Seeder, scenario_threads: list[SeededThread]
) -> None:
    lazily, _ = await compare_every_checkpoint(store, seeder, scenario_threads)
    assert lazily >= 40  # the lazy path is the one that ran, not the fallback


@pytest.mark.backends("sqlite", "postgres")
@pytest.mark.parametrize("turns", [1, 5, 9])
async def test_delta_channel_between_and_at_snapshots(
    store: Store, seeder: Seeder, turns: int
) -> None:
    thread = await seeder.chat([f"answer {i}" for i in range(turns)], mode="delta")
    lazily, handed_over = await compare_every_checkpoint(store, seeder, [thread])
    assert lazily > 0 and handed_over == 0


@pytest.mark.backends("sqlite", "postgres")
async def test_compaction_by_remove_message_decodes_lazily(store: Store, seeder: Seeder) -> None:
    thread = await seeder.delta_compacted(how="remove")
    lazily, handed_over = await compare_every_checkpoint(store, seeder, [thread])
    assert lazily > 0 and handed_over == 0


@pytest.mark.backends("sqlite", "postgres")
async def test_compaction_by_overwrite_decodes_the_same(store: Store, seeder: Seeder) -> None:
    thread = await seeder.delta_compacted(how="overwrite")
    lazily, _ = await compare_every_checkpoint(store, seeder, [thread])
    assert lazily > 0
    reader = store.reader()
    try:
        answer = await reader.read(thread.thread_id)
    finally:
        await reader.close()
    assert answer.content == "compacted answer (overwrite)"


def test_an_overwrite_in_the_history_is_left_to_the_full_decode() -> None:
    """The lazy replay does not fold Overwrite; it says so instead of guessing."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.types import Overwrite

    blob = JsonPlusSerializer().dumps_typed(Overwrite([HumanMessage("q")]))[1]
    with pytest.raises(lazy.Unexpected):
        lazy.write_entries(lazy.parse(blob))


@pytest.mark.backends("sqlite", "postgres")
async def test_input_waiting_in_start_decodes_the_same(store: Store, seeder: Seeder) -> None:
    thread = await seeder.input_not_yet_applied()
    lazily, _ = await compare_every_checkpoint(store, seeder, [thread])
    assert lazily > 0


@pytest.mark.backends("sqlite", "postgres")
async def test_messages_written_as_dicts_decode_the_same(store: Store, seeder: Seeder) -> None:
    """JSON input (as the HTTP API sends it) next to message objects."""
    thread = await seeder.chat(["dict answer"], mode="delta")

    def answer_in_dicts(state: dict) -> dict:
        return {"messages": [{"type": "ai", "content": "from a dict", "id": "dict-ai-1"}]}

    from tests.support.seeds import node_graph

    graph = node_graph(seeder.saver, [("dicts", answer_in_dicts)], mode="delta")
    await seeder.run(
        thread, {"messages": [{"role": "user", "content": "dict question"}]}, graph=graph
    )
    lazily, handed_over = await compare_every_checkpoint(store, seeder, [thread])
    assert lazily > 0 and handed_over == 0
    reader = store.reader()
    try:
        assert (await reader.read(thread.thread_id)).content == "from a dict"
    finally:
        await reader.close()


def test_replay_matches_the_reducer_on_ids() -> None:
    """Same id replaces in place, RemoveMessage deletes, no id appends."""
    from langchain_core.messages import RemoveMessage
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.graph.message import _messages_delta_reducer

    serde = JsonPlusSerializer()

    def entries(messages: list) -> list[lazy.LazyMessage]:
        return lazy.write_entries(lazy.parse(serde.dumps_typed(messages)[1]))

    seed = [HumanMessage("q", id="h"), AIMessage("old", id="a"), AIMessage("gone", id="g")]
    writes = [[AIMessage("new", id="a")], [RemoveMessage(id="g")], [AIMessage("tail")]]
    expected = _messages_delta_reducer(seed, writes)
    replayed = delta.replay(entries(seed), [entries(w) for w in writes])
    hook = serde._unpack_ext_hook
    built = [entry.build(hook) for entry in replayed]
    assert [(m.id, m.content) for m in built] == [(m.id, m.content) for m in expected]


@pytest.mark.parametrize(
    "writes",
    [
        [[AIMessage("tail", id="new-1")], [HumanMessage("q2", id="new-2")]],
        [[AIMessage("new", id=f"a-{'x' * 40}")], [AIMessage("tail", id="new-1")]],
        [["remove", f"g-{'y' * 300}"], [AIMessage("tail")]],
        [[AIMessage("again", id="h")], ["remove", "new-1"]],
        # A turn of new messages, one of them replacing a snapshot message: read newest
        # first, the fold switches to the exact one partway through the turn.
        [
            [HumanMessage("q2", id="new-q")],
            [AIMessage("again", id="h")],
            [AIMessage("step", id="new-3")],
            [AIMessage("last", id="new-4")],
        ],
        [[HumanMessage("q2", id="new-q")], ["remove", "h"], [AIMessage("", id="new-3")]],
    ],
    ids=[
        "appends",
        "replaces-str8-id",
        "removes-str16-id",
        "replaces-fixstr-id",
        "replaces-inside-the-turn",
        "removes-inside-the-turn",
    ],
)
def test_replay_over_a_snapshot_matches_the_reducer(writes: list) -> None:
    """A real DeltaChannel snapshot (ids of every msgpack string width): the replay
    that skips indexing the snapshot for ids it cannot hold folds as the reducer does."""
    from langchain_core.messages import RemoveMessage
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.serde.types import _DeltaSnapshot
    from langgraph.graph.message import _messages_delta_reducer

    serde = JsonPlusSerializer()
    seed = [
        HumanMessage("q", id="h"),
        AIMessage("old", id=f"a-{'x' * 40}"),
        AIMessage("gone", id=f"g-{'y' * 300}"),
        AIMessage("", id="t", tool_calls=[{"name": "f", "args": {}, "id": "new-2"}]),
    ]
    batches = [[RemoveMessage(id=w[1])] if w and w[0] == "remove" else w for w in writes]
    expected = _messages_delta_reducer(seed, batches)
    packed = lazy.parse(serde.dumps_typed({"messages": _DeltaSnapshot(seed)})[1])["messages"]

    def replayed() -> Sequence[Any]:  # a snapshot read afresh: nothing known about it yet
        snapshot = delta.seed_of(packed)
        assert snapshot.raw is not None
        return delta.replay(
            snapshot,
            [lazy.write_entries(lazy.parse(serde.dumps_typed(batch)[1])) for batch in batches],
        )

    def built(entries: Iterable[Any]) -> list[tuple[Any, Any]]:
        messages = [lazy.entry(item).build(serde._unpack_ext_hook) for item in entries]
        return [(m.id, m.content) for m in messages if m is not None]

    assert built(replayed()) == [(m.id, m.content) for m in expected]
    assert built(reversed(replayed())) == [(m.id, m.content) for m in reversed(expected)]


def test_a_snapshot_is_not_indexed_for_new_ids() -> None:
    """Every ordinary step adds messages with new ids: the snapshot's entries stay
    unparsed while the answer is found among the new ones (its id index is what made a
    cold first read cost ~390 ms at 10,000 messages)."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    serde = JsonPlusSerializer()
    seed = [AIMessage(f"m{i}", id=f"id-{i}") for i in range(50)]
    packed = lazy.parse(serde.dumps_typed(_DeltaSnapshot(seed))[1])
    snapshot = delta.seed_of(packed)
    write = lazy.write_entries(lazy.parse(serde.dumps_typed([AIMessage("n", id="fresh")])[1]))
    replayed = delta.replay(snapshot, [write])
    newest = next(lazy.newest_first(replayed, serde._unpack_ext_hook))
    assert newest.content == "n"
    assert snapshot._index is None and snapshot._entries is None  # neither indexed nor parsed
    assert len(replayed) == 51
    assert delta.packed_ids(snapshot.raw or b"") >= {f"id-{i}".encode() for i in range(50)}


@pytest.mark.backends("postgres")
async def test_every_scenario_decodes_the_same_from_the_values_end(
    store: Store,
    seeder: Seeder,
    scenario_threads: list[SeededThread],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every stored value left on the server however small, its newest entries proven
    by its step's writes (``value_end``) or else read whole: the same answers as the
    full decode, and many answered from the step's writes alone."""
    proven: list[bool] = []
    prove = value_end.newest_entries

    def counted(*args: Any) -> list[bytes] | None:
        entries = prove(*args)
        proven.append(entries is not None)
        return entries

    monkeypatch.setattr(postgres_parts, "WHOLE_VALUE_BYTES", 0)
    monkeypatch.setattr(value_end, "newest_entries", counted)
    lazily, _ = await compare_every_checkpoint(store, seeder, scenario_threads)
    assert lazily >= 40
    assert proven.count(True) >= 20
