"""A DeltaChannel thread's first read checks only the ids of the entries it reaches against
the snapshot (``store.delta``), and still folds as the reducer does when a later write
replaces or removes a message the snapshot holds; each scenario on a real thread, held
against the saver's full decode and against a read with the check skipped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store import delta
from evoscientist_final_answer.store.postgres import history as postgres_history
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from evoscientist_final_answer.store.sqlite import history as sqlite_history
from tests.support.seeds import SeededThread, Seeder, Store

pytestmark = pytest.mark.backends("sqlite", "postgres")

Edit = Callable[[list[BaseMessage]], list[BaseMessage]]


@pytest.fixture(params=["parsed", "left where it lies"])
def snapshot_where(
    request: pytest.FixtureRequest, store: Store, monkeypatch: pytest.MonkeyPatch
) -> str:
    """How the first read meets the snapshot: parsed out of its row as it comes, or
    (whatever its size) left where it lies: on PostgreSQL on the server, on SQLite in
    the row's bytes, walked to, not parsed (``sqlite_history.LOCATE_BYTES``)."""
    if request.param == "left where it lies":
        if store.backend == "postgres":
            monkeypatch.setattr(postgres_history, "INLINE_SNAPSHOT_BYTES", 0)
        else:
            monkeypatch.setattr(sqlite_history, "LOCATE_BYTES", 0)
    return str(request.param)


async def edited_thread(seeder: Seeder, edit: Edit) -> SeededThread:
    """Two turns, then one update of the messages channel made by ``edit`` from the
    thread's messages: the newest checkpoint sits one update past a snapshot that
    holds the whole last turn."""
    thread = await seeder.chat(["answer 1", "answer 2"], mode="delta")
    messages = (await thread.graph.aget_state(thread.config)).values["messages"]
    await thread.graph.aupdate_state(thread.config, {"messages": edit(messages)}, as_node="agent")
    return thread


async def first_read(store: Store, thread_id: str) -> FinalAnswer:
    reader = store.reader()
    try:
        return await reader.read(thread_id)
    finally:
        await reader.close()


async def full_read(store: Store, thread_id: str) -> FinalAnswer:
    reader = store.reader(lazy_decoding=False)
    try:
        return await reader.read(thread_id)
    finally:
        await reader.close()


async def check_skipped(
    monkeypatch: pytest.MonkeyPatch, read: Callable[[], Awaitable[FinalAnswer]]
) -> FinalAnswer:
    """``read`` with every id taken for one the snapshot does not hold."""
    with monkeypatch.context() as patch:
        patch.setattr(delta.Seed, "absent", lambda self, ids, also=(): True)
        return await read()


def kept_seeds(reader: Any) -> list[delta.Seed]:
    """The snapshots a reader keeps (either backend's ``HistoryWalker.seeds``)."""
    seeds = reader._history.seeds
    return [seeds.get(key) for key in seeds]


def replace_question(messages: list[BaseMessage]) -> list[BaseMessage]:
    question = messages[-2]
    assert isinstance(question, HumanMessage) and question.text == "question 2"
    return [HumanMessage("question 2, reworded", id=question.id)]


def remove_answer(messages: list[BaseMessage]) -> list[BaseMessage]:
    answer = messages[-1]
    assert answer.text == "answer 2"
    return [RemoveMessage(id=answer.id or "")]


@pytest.mark.parametrize(
    ("edit", "expected", "if_unchecked"),
    [
        # Replaced in place, before the answer: the turn still has its answer (appended,
        # the reworded question would end the thread and leave the turn unanswered).
        (replace_question, "answer 2", ""),
        # The answer the snapshot holds is removed: the turn has none left.
        (remove_answer, "", "answer 2"),
    ],
    ids=["replaces-a-snapshot-message", "removes-a-snapshot-message"],
)
async def test_a_write_touching_the_snapshot_in_the_last_turn(
    store: Store,
    seeder: Seeder,
    snapshot_where: str,
    monkeypatch: pytest.MonkeyPatch,
    edit: Edit,
    expected: str,
    if_unchecked: str,
) -> None:
    thread = await edited_thread(seeder, edit)
    answer = await first_read(store, thread.thread_id)
    assert answer == await full_read(store, thread.thread_id)
    assert answer.content == expected
    unchecked = await check_skipped(monkeypatch, lambda: first_read(store, thread.thread_id))
    assert unchecked.content == if_unchecked, "the scenario does not exercise the id check"


async def test_a_turn_of_new_messages_reads_no_snapshot_entry(
    store: Store, seeder: Seeder, snapshot_where: str
) -> None:
    """Every ordinary step adds new ids: the first read parses none of the snapshot's
    entries (and, left on the server, never reads its bytes)."""
    thread = await seeder.chat(["answer 1", "answer 2", "answer 3"], mode="delta")
    await thread.graph.aupdate_state(
        thread.config, {"messages": [HumanMessage("question 4")]}, as_node="agent"
    )
    await thread.graph.aupdate_state(
        thread.config, {"messages": [HumanMessage("question 5")]}, as_node="agent"
    )
    reader = store.reader()
    try:
        answer = await reader.read(thread.thread_id)
        seeds = kept_seeds(reader)
    finally:
        await reader.close()
    assert answer == await full_read(store, thread.thread_id)
    assert answer.content == ""  # the newest turn (question 5) has no answer yet
    assert seeds and all(seed._entries is None for seed in seeds)
    if snapshot_where == "left where it lies":
        if store.backend == "postgres":
            assert all(seed.raw is None for seed in seeds)  # never read
        else:
            assert all(isinstance(seed.raw, memoryview) for seed in seeds)  # not copied


async def test_a_snapshot_read_once_answers_the_next_read(
    store: Store, seeder: Seeder, snapshot_where: str
) -> None:
    """A kept snapshot answers the next checkpoint's read: its ids known not to be
    there stay known, an id it holds is found (the snapshot read then)."""
    thread = await seeder.chat(["answer 1", "answer 2"], mode="delta")
    reader = store.reader()
    try:
        assert (await reader.read(thread.thread_id)).content == "answer 2"
        await thread.graph.aupdate_state(
            thread.config,
            {
                "messages": replace_question(
                    (await thread.graph.aget_state(thread.config)).values["messages"]
                )
            },
            as_node="agent",
        )
        answer = await reader.read(thread.thread_id)
        if isinstance(reader, PostgresAnswerReader) and snapshot_where == "left where it lies":
            assert any(seed.raw is not None for seed in kept_seeds(reader))
    finally:
        await reader.close()
    assert answer == await full_read(store, thread.thread_id)
    assert answer.content == "answer 2"
