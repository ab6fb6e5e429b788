"""The one pure decode (``store/decoding.py``: ``answer_from_parts``) and the skeleton around
it, on the parts each backend's own ``PartsSource`` fetches of real checkpoints, decoded
once the reader is closed; each answer held against the saver's full decode and, for a
head, ``aget_state``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import psycopg
import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.store import delta, lazy, value_end
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.decoding import (
    CheckpointParts,
    PartsSource,
    answer_from_parts,
    decode,
    decode_parts,
    fetch_parts,
)
from evoscientist_final_answer.store.errors import CheckpointUnreadable
from evoscientist_final_answer.store.postgres import connection as postgres_connection
from evoscientist_final_answer.store.postgres import history as postgres_history
from evoscientist_final_answer.store.postgres import parts as postgres_parts
from evoscientist_final_answer.store.postgres.parts import PostgresParts
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from evoscientist_final_answer.store.sqlite import connection as sqlite_connection
from evoscientist_final_answer.store.sqlite import history as sqlite_history
from evoscientist_final_answer.store.sqlite.parts import SqliteParts
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import (
    DELTA_PREAMBLE,
    REASONING_CASES,
    SeededThread,
    Seeder,
    Store,
    answer,
    expected_answer,
    node_graph,
)

pytestmark = pytest.mark.backends("sqlite", "postgres")

# Bytes no msgpack decoder accepts (0xc1 is the one byte msgpack never uses).
GARBAGE = b"\xc1 not a serialized value \xc1"

Seed = Callable[[Seeder], Awaitable[SeededThread]]
FullDecode = Callable[[], Awaitable[FinalAnswer]]


@asynccontextmanager
async def parts_source(
    reader: CheckpointAnswerReader, thread_id: str, checkpoint_id: str
) -> AsyncIterator[tuple[PartsSource, FullDecode]]:
    """The backend's source of the checkpoint's parts, over a session of ``reader``'s,
    and the saver's full decode of the same checkpoint over the same session."""
    if isinstance(reader, SqliteAnswerReader):
        async with reader._db.session() as saver:

            async def sqlite_full() -> FinalAnswer:
                return await reader.full_answer(saver, thread_id, checkpoint_id)

            yield SqliteParts(saver, thread_id, checkpoint_id, reader._history), sqlite_full
        return
    assert isinstance(reader, PostgresAnswerReader)
    async with reader._db.session() as conn:
        saver = AsyncPostgresSaver(conn)

        async def postgres_full() -> FinalAnswer:
            async with conn.transaction():
                return await reader.full_answer(saver, thread_id, checkpoint_id)

        yield (
            PostgresParts(conn, saver.serde, thread_id, checkpoint_id, reader._history),
            (postgres_full),
        )


async def root_checkpoint_ids(seeder: Seeder, thread: SeededThread) -> list[str]:
    """The thread's root checkpoints, newest first."""
    config = {"configurable": {"thread_id": thread.thread_id, "checkpoint_ns": ""}}
    return [tup.checkpoint["id"] async for tup in seeder.saver.alist(config)]


def messages_from(parts: CheckpointParts) -> str:
    """Where the parts' messages came from."""
    if parts.messages is None:
        return "none"
    if isinstance(parts.messages, delta.Joined):
        return "history"
    if isinstance(parts.messages, value_end.Newest):
        return "end"
    return "stored"


def decoded(thread_id: str, source: PartsSource, parts: CheckpointParts) -> FinalAnswer:
    return answer_from_parts(thread_id, parts, lazy.ext_hook(source.serde), source.serde)


def answer_after_a_tool_call_without_text(seeder: Seeder) -> Awaitable[SeededThread]:
    """A turn whose newest step is a tool call with no text: its answer lies further
    back than that step's own writes."""
    graph = node_graph(
        seeder.saver,
        [
            ("reply", answer("the answer before the tool call")),
            ("call", answer("", tool_calls=[{"name": "search", "args": {}, "id": "call-1"}])),
        ],
    )
    thread = seeder.thread(graph, label="tool call without text")

    async def run() -> SeededThread:
        await seeder.run(thread, {"messages": [HumanMessage("look it up")]})
        return thread

    return run()


# ------------------------------------------------------------------ every shape


@dataclass(frozen=True)
class Shape:
    seed: Seed
    messages: Literal["stored", "history", "none"]  # where the messages come from
    status: RunStatus
    at: Literal["head", "first"] = "head"  # the checkpoint decoded


SHAPES = {
    "plain chat": Shape(lambda s: s.chat(["answer 1", "answer 2"]), "stored", RunStatus.SUCCESS),
    "DeltaChannel at a snapshot": Shape(
        lambda s: s.chat(["answer 1", "answer 2"], mode="delta"), "stored", RunStatus.SUCCESS
    ),
    "DeltaChannel between snapshots": Shape(
        lambda s: s.chat(["answer 1", "answer 2"], mode="delta", preamble=DELTA_PREAMBLE),
        "history",
        RunStatus.SUCCESS,
    ),
    "DeltaChannel compacted by RemoveMessage": Shape(
        lambda s: s.delta_compacted(how="remove"), "history", RunStatus.SUCCESS
    ),
    "tool-calling agent, two turns": Shape(
        lambda s: s.agent(("How do I test a hypothesis?", "And report it?")),
        "history",
        RunStatus.SUCCESS,
    ),
    "reasoning in every provider's format": Shape(
        lambda s: s.chat([case.message for case in REASONING_CASES]), "stored", RunStatus.SUCCESS
    ),
    "tool call without text after the answer": Shape(
        answer_after_a_tool_call_without_text, "stored", RunStatus.SUCCESS
    ),
    "interrupted": Shape(
        lambda s: s.interrupted({"question": "approve?"}), "stored", RunStatus.INTERRUPTED
    ),
    "failed": Shape(lambda s: s.failed("kaboom"), "stored", RunStatus.ERROR),
    "paused before a node": Shape(lambda s: s.paused_before(), "stored", RunStatus.RUNNING),
    "input waiting in __start__": Shape(
        lambda s: s.input_not_yet_applied(), "stored", RunStatus.RUNNING
    ),
    "subgraph waiting": Shape(lambda s: s.subgraph_waiting(), "stored", RunStatus.INTERRUPTED),
    "a thread's first checkpoint": Shape(
        lambda s: s.chat(["answer"], mode="delta"), "none", RunStatus.RUNNING, at="first"
    ),
}


@pytest.mark.parametrize("name", list(SHAPES))
async def test_the_pure_decode_answers_each_shape_as_the_saver_does(
    store: Store, seeder: Seeder, name: str
) -> None:
    shape = SHAPES[name]
    thread = await shape.seed(seeder)
    ids = await root_checkpoint_ids(seeder, thread)
    checkpoint_id = ids[0] if shape.at == "head" else ids[-1]
    reader = store.reader()
    try:
        async with parts_source(reader, thread.thread_id, checkpoint_id) as (source, full):
            parts = await fetch_parts(source)
            expected = await full()
    finally:
        await reader.close()
    assert messages_from(parts) == shape.messages
    # The reader is closed: whatever the decode needs, it has.
    answer = decoded(thread.thread_id, source, parts)
    assert answer == expected
    assert answer.status is shape.status
    assert answer.checkpoint_id == checkpoint_id
    assert decoded(thread.thread_id, source, parts) == answer  # the same parts, the same answer
    if shape.at == "head":
        assert answer.content == expected_answer(await thread.state())


# ------------------------------------------------------------------ parts fetched later


@dataclass(frozen=True)
class Later:
    seed: Seed
    # Per backend: the knob that leaves a part where it lies, and what the decode then
    # asks for (None: the backend fetched everything with the row and history).
    knobs: dict[str, tuple[Any, str, int]]
    needs: dict[str, type[lazy.PartNeeded] | None]


LATER = {
    "a DeltaChannel snapshot left where it lies": Later(
        lambda s: s.chat(["answer 1", "answer 2"], mode="delta", preamble=DELTA_PREAMBLE),
        knobs={
            "sqlite": (sqlite_history, "LOCATE_BYTES", 0),  # a view of the row's bytes
            "postgres": (postgres_history, "INLINE_SNAPSHOT_BYTES", 0),  # on the server
        },
        needs={"sqlite": None, "postgres": delta.SeedNeeded},
    ),
    "a large value whose last step does not decide": Later(
        answer_after_a_tool_call_without_text,
        knobs={"postgres": (postgres_parts, "WHOLE_VALUE_BYTES", 0)},  # its end sent alone
        needs={"sqlite": None, "postgres": value_end.WholeNeeded},
    ),
}


@pytest.mark.parametrize("name", list(LATER))
async def test_a_part_left_where_it_lies_is_asked_for_and_then_answers(
    store: Store, seeder: Seeder, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pure decode raises ``lazy.PartNeeded`` before building anything from a part
    the backend left where it lies; ``more`` fetches it, and the decode answers as the
    saver does."""
    case = LATER[name]
    if store.backend in case.knobs:
        monkeypatch.setattr(*case.knobs[store.backend])
    thread = await case.seed(seeder)
    checkpoint_id = (await root_checkpoint_ids(seeder, thread))[0]
    reader = store.reader()
    asked: list[lazy.PartNeeded] = []
    try:
        async with parts_source(reader, thread.thread_id, checkpoint_id) as (source, full):
            parts = await fetch_parts(source)
            while True:
                try:
                    answer = decoded(thread.thread_id, source, parts)
                    break
                except lazy.PartNeeded as need:
                    asked.append(need)
                    assert len(asked) < 4, asked
                    await source.more(parts, need)
            expected = await full()
    finally:
        await reader.close()
    wanted = case.needs[store.backend]
    assert [type(need) for need in asked[:1]] == ([wanted] if wanted else [])
    assert answer == expected
    assert answer.content == expected_answer(await thread.state())
    assert decoded(thread.thread_id, source, parts) == answer  # complete now: nothing read


# ------------------------------------------------------------------ what a failure is


def damage_status_write(parts: CheckpointParts) -> CheckpointParts:
    (task_id, channel, type_, _), *rest = parts.pending_writes
    return dataclasses.replace(parts, pending_writes=[(task_id, channel, type_, GARBAGE), *rest])


def damage_newest_message(parts: CheckpointParts) -> CheckpointParts:
    assert parts.messages is not None
    messages = [*parts.messages[:-1], lazy.Ext(lazy.EXT_CONSTRUCTOR_KW_ARGS, GARBAGE)]
    return dataclasses.replace(parts, messages=messages)


@dataclass(frozen=True)
class Damage:
    seed: Seed
    damage: Callable[[CheckpointParts], CheckpointParts]


DAMAGES = {
    "a garbage __error__ write": Damage(lambda s: s.failed("kaboom"), damage_status_write),
    "a garbage __interrupt__ write": Damage(
        lambda s: s.interrupted({"question": "approve?"}), damage_status_write
    ),
    "a garbage newest message": Damage(lambda s: s.chat(["a", "b"]), damage_newest_message),
}


@pytest.mark.parametrize("name", list(DAMAGES))
async def test_parts_no_decoder_accepts_are_an_unreadable_checkpoint(
    store: Store, seeder: Seeder, name: str
) -> None:
    """Real parts, one of them damaged as a bad disk would leave its bytes: whatever the
    decoder raises, ``decode`` calls it ``CheckpointUnreadable`` (not retryable), and
    leaves the full decode alone (the same rows would fail it too)."""
    case = DAMAGES[name]
    thread = await case.seed(seeder)
    checkpoint_id = (await root_checkpoint_ids(seeder, thread))[0]
    reader = store.reader()
    try:
        async with parts_source(reader, thread.thread_id, checkpoint_id) as (source, _):
            parts = await fetch_parts(source)
    finally:
        await reader.close()
    damaged = case.damage(parts)
    full_decodes: list[str] = []

    async def lazily() -> FinalAnswer:
        return decoded(thread.thread_id, source, damaged)

    async def fully() -> FinalAnswer:
        full_decodes.append(checkpoint_id)
        raise AssertionError("not reached")

    failure = store_failure_of(store)
    with pytest.raises(CheckpointUnreadable, match=checkpoint_id):
        await decode(
            thread.thread_id,
            checkpoint_id,
            lazy_decode=lazily,
            full_decode=fully,
            store_failure=failure,
        )
    assert full_decodes == []
    assert decoded(thread.thread_id, source, parts).checkpoint_id == checkpoint_id  # undamaged


def store_failure_of(store: Store) -> Callable[[Exception], bool]:
    if store.backend == "sqlite":
        return sqlite_connection.store_failure
    return postgres_connection.store_failure


class SingleMessageState(TypedDict):
    """A messages channel that holds one message, not a list (no reducer)."""

    messages: AnyMessage


async def test_a_shape_the_lazy_decode_does_not_know_goes_to_the_full_decode(
    store: Store, seeder: Seeder
) -> None:
    """A messages channel holding one message, not a list: the parts say so
    (``lazy.Unexpected``) while they are fetched, and ``decode`` hands the checkpoint to
    the saver's decode, which answers."""
    builder = StateGraph(SingleMessageState)
    builder.add_node("reply", lambda state: {"messages": AIMessage("one message, no list")})
    builder.add_edge(START, "reply")
    thread = seeder.thread(builder.compile(checkpointer=seeder.saver), label="single message")
    await seeder.run(thread, {"messages": HumanMessage("a question")})
    checkpoint_id = (await root_checkpoint_ids(seeder, thread))[0]
    reader = store.reader()
    try:
        async with parts_source(reader, thread.thread_id, checkpoint_id) as (source, full):
            with pytest.raises(lazy.Unexpected, match="not a list"):
                await fetch_parts(source)

            async def lazily() -> FinalAnswer:
                return await decode_parts(thread.thread_id, source)

            answer = await decode(
                thread.thread_id,
                checkpoint_id,
                lazy_decode=lazily,
                full_decode=full,
                store_failure=store_failure_of(store),
            )
    finally:
        await reader.close()
    assert answer.content == "one message, no list"
    assert answer.status is RunStatus.SUCCESS


async def test_a_store_failure_is_raised_as_it_is_for_the_session_to_report(
    store: Store, seeder: Seeder
) -> None:
    """The connection closed under the decode: the driver's own error leaves ``decode``
    as it is (the backend's session makes it ``StoreUnavailable``, retryable), never
    ``CheckpointUnreadable``."""
    thread = await seeder.chat(["answer"], mode="delta", preamble=DELTA_PREAMBLE)
    checkpoint_id = (await root_checkpoint_ids(seeder, thread))[0]
    source: PartsSource
    reader = store.reader()
    if isinstance(reader, SqliteAnswerReader):
        saver = await reader._open()
        source = SqliteParts(saver, thread.thread_id, checkpoint_id, reader._history)
        await saver.conn.close()
    else:
        conn = await psycopg.AsyncConnection.connect(
            store.uri, **postgres_connection.read_only_kwargs(store.uri)
        )
        serde = AsyncPostgresSaver(conn).serde
        source = PostgresParts(conn, serde, thread.thread_id, checkpoint_id, reader._history)
        await conn.close()

    async def lazily() -> FinalAnswer:
        return await decode_parts(thread.thread_id, source)

    async def fully() -> FinalAnswer:
        raise AssertionError("a store failure is not handed to the full decode")

    failure = store_failure_of(store)
    try:
        with pytest.raises(Exception) as raised:
            await decode(
                thread.thread_id,
                checkpoint_id,
                lazy_decode=lazily,
                full_decode=fully,
                store_failure=failure,
            )
    finally:
        await reader.close()
    assert failure(raised.value), raised.value
    assert not isinstance(raised.value, CheckpointUnreadable)
