"""The reader's one connection (``store/sqlite/connection.py``): its trips to
aiosqlite's thread skip the saver's lock, and still give every answer a lone reader
gives (the PostgreSQL twin: ``tests/store/postgres/test_connection.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import AGENT_NAME, DELTA_PREAMBLE, Seeder

pytestmark = pytest.mark.backends("sqlite")


async def lone_read(db_path: Path, thread_id: str) -> FinalAnswer:
    """What a reader that has read nothing before answers."""
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        return await reader.read(thread_id)
    finally:
        await reader.close()


async def test_lock_free_trips_interleave_with_the_savers_own_reads(
    db_path: Path, seeder: Seeder
) -> None:
    """The reader's trips skip the saver's lock (``connection.fetch``), so they
    land between the steps of the saver's own cursor reads (a full decode) on the same
    connection: every answer is still the one a lone reader gives."""
    threads = [await seeder.agent(("q1", "q2"))] + [
        await seeder.chat(["first", f"second {i}"], mode="delta", preamble=DELTA_PREAMBLE)
        for i in range(3)
    ]
    expected = {t.thread_id: await lone_read(db_path, t.thread_id) for t in threads}
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        for _ in range(5):
            reader.forget_answers()
            reader._history.forget()
            heads = [await reader.head(t.thread_id, None) for t in threads]
            async with reader._db.session() as saver:
                full = [
                    reader.full_answer(saver, t.thread_id, h.checkpoint_id)
                    for t, h in zip(threads, heads, strict=True)
                    if h is not None
                ]
                lazy = [reader.read(t.thread_id) for t in threads]
                answers = await asyncio.gather(*full, *lazy)
            for thread, answer in zip(threads + threads, answers, strict=True):
                want = expected[thread.thread_id]
                assert (answer.content, answer.status, answer.checkpoint_id) == (
                    want.content,
                    want.status,
                    want.checkpoint_id,
                )
    finally:
        await reader.close()
