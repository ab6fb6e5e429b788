"""The answer is computed once per checkpoint: a poll that finds the same head (same
newest checkpoint, same writes against it) reads no blob."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from EvoScientist.store.sqlite_reader import SqliteAnswerReader
from tests.seeds import AGENT_NAME, Seeder


async def test_a_repeat_poll_reads_no_blob(db_path: Path, seeder: Seeder) -> None:
    thread = await seeder.agent(("Cache me?",))
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        first = await reader.read(thread.thread_id)
        expected = await thread.expected()
        # Ruin every blob of the thread behind the reader's back: a reader that
        # decoded anything again would now fail.
        with sqlite3.connect(db_path) as conn:
            conn.execute(
                "UPDATE checkpoints SET checkpoint = X'c1' WHERE thread_id = ?",
                (thread.thread_id,),
            )
        conn.close()
        again = await reader.read(thread.thread_id)
        assert again == first
        assert again.content == expected
    finally:
        await reader.close()


async def test_a_new_write_against_the_head_is_a_new_answer(db_path: Path, seeder: Seeder) -> None:
    """The same checkpoint with one more write (a resume, an interrupt, an error) is a
    different head: the cached answer is not reused."""
    thread = await seeder.agent(("Then fail?",))
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    try:
        before = await reader.read(thread.thread_id)
        assert before.status.value == "success"
        config = (await seeder.saver.aget_tuple(thread.config)).config
        await seeder.saver.aput_writes(config, [("__error__", "ValueError('late')")], "task-x")
        after = await reader.read(thread.thread_id)
        assert after.status.value == "error"
        assert "late" in after.error["message"]
    finally:
        await reader.close()
