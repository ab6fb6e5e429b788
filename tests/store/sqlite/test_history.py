"""The SQLite history walk to a DeltaChannel's stored value
(``store/sqlite/history.py``), on real seeded threads (the PostgreSQL twin:
``tests/store/postgres/test_history.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store.sqlite.history import KEPT_SNAPSHOTS
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import AGENT_NAME, DELTA_PREAMBLE, Seeder
from tests.support.trips import count_trips

pytestmark = pytest.mark.backends("sqlite")

# The walk that reads every ancestor's blob (``ANCESTORS_SQL``) selects them by type.
BLOB_WALK = "SELECT chain.checkpoint_id, chain.parent_checkpoint_id, c.type"


async def lone_read(db_path: Path, thread_id: str) -> FinalAnswer:
    """What a reader that has read nothing before answers."""
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        return await reader.read(thread_id)
    finally:
        await reader.close()


async def test_a_young_delta_thread_is_read_again_without_its_ancestors_blobs(
    db_path: Path, seeder: Seeder
) -> None:
    """A thread younger than its first snapshot: the first read walks every ancestor's
    blob back to the thread's first checkpoint; a read of a later head walks only
    their ids to that root, and answers exactly as a fresh reader does."""
    thread = await seeder.agent(("q1", "q2"))  # the project's agent: snapshots every 100
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    statements: list[str] = []
    try:
        first = await reader.read(thread.thread_id)
        assert first.complete
        await seeder.run(thread, {"messages": [HumanMessage("q3")]})
        assert reader._conn is not None
        await reader._conn.set_trace_callback(statements.append)
        again = await reader.read(thread.thread_id)
        await reader._conn.set_trace_callback(None)
    finally:
        await reader.close()
    fresh = await lone_read(db_path, thread.thread_id)
    assert again == fresh and again.complete and again.checkpoint_id != first.checkpoint_id
    assert statements and not [s for s in statements if BLOB_WALK in s]


async def test_a_new_head_of_a_young_delta_thread_is_read_in_two_trips(
    db_path: Path, seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each trip to aiosqlite's thread waits for the GIL behind a busy event loop, and
    the read of a new head made five of them (ids, row, ancestor ids, blobs, writes):
    the dependent statements now run together, one trip for the head and its row, one
    for the history behind it."""
    thread = await seeder.agent(("q1", "q2"))
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        await reader.read(thread.thread_id)
        await seeder.run(thread, {"messages": [HumanMessage("q3")]})
        trips = count_trips(reader, monkeypatch)
        again = await reader.read(thread.thread_id)
        monkeypatch.undo()
    finally:
        await reader.close()
    fresh = await lone_read(db_path, thread.thread_id)
    assert again == fresh and again.complete
    assert len(trips) == 2


async def test_a_thread_whose_snapshot_was_evicted_is_read_without_the_blob_walk(
    db_path: Path, seeder: Seeder
) -> None:
    """More threads polled than snapshots kept decoded (a hundred tabs): the reader
    still knows each thread's nearest snapshot by id, and reads its blob in the same
    trip as the writes after it, instead of walking every ancestor's blob again."""
    threads = [
        await seeder.chat(
            [f"answer {i}", f"answer {i} again"], mode="delta", preamble=DELTA_PREAMBLE
        )
        for i in range(KEPT_SNAPSHOTS + 1)
    ]
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    statements: list[str] = []
    try:
        for thread in threads:
            await reader.read(thread.thread_id)
        assert not [key for key in reader._history.seeds if key[0] == threads[0].thread_id]
        reader.forget_answers()  # a first read of its head again, from the lazy decoder
        assert reader._conn is not None
        await reader._conn.set_trace_callback(statements.append)
        again = await reader.read(threads[0].thread_id)
        await reader._conn.set_trace_callback(None)
    finally:
        await reader.close()
    fresh = await lone_read(db_path, threads[0].thread_id)
    assert again == fresh and again.content == "answer 0 again"
    assert statements and not [s for s in statements if BLOB_WALK in s]
