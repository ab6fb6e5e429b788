"""The answer is computed once per checkpoint: a poll that finds the same head (same
newest checkpoint, same writes against it) reads no blob."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store.base import Head
from evoscientist_final_answer.store.errors import ThreadNotFound
from evoscientist_final_answer.store.sqlite.change_signal import COALESCE_SECONDS, TRAILING_SECONDS
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import AGENT_NAME, Seeder, uuid_thread_id

SETTLE_SECONDS = COALESCE_SECONDS + TRAILING_SECONDS + 0.1


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


async def test_a_repeat_poll_runs_no_query(db_path: Path, seeder: Seeder) -> None:
    """Nothing written since the last read (the change signal vouches for it): the poll
    does not even ask the file for the head."""
    thread = await seeder.agent(("Ask me twice?",))
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    statements: list[str] = []
    try:
        first = await reader.read(thread.thread_id)
        await asyncio.sleep(SETTLE_SECONDS)  # the seeder's own commits reported
        first = await reader.read(thread.thread_id)
        assert reader._conn is not None
        await reader._conn.set_trace_callback(statements.append)
        for _ in range(5):
            assert await reader.read(thread.thread_id) == first
        assert statements == []
        with pytest.raises(ThreadNotFound):  # another thread's head is still asked for
            await reader.read(uuid_thread_id())
        assert statements
    finally:
        await reader.close()


def sync_chat_graph(conn: sqlite3.Connection) -> CompiledStateGraph:
    """A real graph on the synchronous saver: its commits land without the event loop
    running in between, as another process's would."""

    def agent(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage(f"answer to {state['messages'][-1].text}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    return builder.compile(checkpointer=SqliteSaver(conn))


async def test_the_poll_right_after_a_commit_sees_it(db_path: Path, seeder: Seeder) -> None:
    """The head cache is exact: a commit made the instant before a poll, before the
    loop could hear of it, is that poll's answer."""
    thread = await seeder.agent(("First?",))
    reader = SqliteAnswerReader(db_path, AGENT_NAME)
    conn = sqlite3.connect(db_path, check_same_thread=False)
    try:
        graph = sync_chat_graph(conn)
        await reader.read(thread.thread_id)
        for turn in range(4):
            await asyncio.sleep(SETTLE_SECONDS)  # quiet: the next read skips the query
            stale = await reader.read(thread.thread_id)
            graph.invoke({"messages": [HumanMessage(f"turn {turn}")]}, thread.config)
            fresh = await reader.read(thread.thread_id)
            state = graph.get_state(thread.config)
            assert fresh.content == f"answer to turn {turn}" != stale.content
            assert fresh.checkpoint_id == state.config["configurable"]["checkpoint_id"]
    finally:
        conn.close()
        await reader.close()


class CountingReader(SqliteAnswerReader):
    """The real reader, counting its decodes and saying when one has begun."""

    decodes = 0

    async def answer(self, thread_id: str, head: Head) -> FinalAnswer:
        self.decodes += 1
        self.decoding.set()
        return await super().answer(thread_id, head)

    @property
    def decoding(self) -> asyncio.Event:
        if not hasattr(self, "_decoding_event"):
            self._decoding_event = asyncio.Event()
        return self._decoding_event


async def test_concurrent_reads_of_a_new_head_share_one_decode(
    db_path: Path, seeder: Seeder
) -> None:
    """A commit wakes every held long-poll at once: they decode the checkpoint once."""
    thread = await seeder.agent(("Wake us all?",))
    reader = CountingReader(db_path, AGENT_NAME)
    try:
        answers = await asyncio.gather(*(reader.read(thread.thread_id) for _ in range(20)))
        assert reader.decodes == 1
        assert {a.content for a in answers} == {await thread.expected()}
    finally:
        await reader.close()


async def test_a_caller_giving_up_leaves_the_decode_to_the_others(
    db_path: Path, seeder: Seeder
) -> None:
    """The first caller (a dropped client, a passed deadline) goes away mid-decode: the
    one that joined it still gets the answer, and the next poll finds it cached."""
    thread = await seeder.agent(("Patience?",))
    reader = CountingReader(db_path, AGENT_NAME)
    try:
        quitter = asyncio.create_task(reader.read(thread.thread_id))
        await reader.decoding.wait()
        stayer = asyncio.create_task(reader.read(thread.thread_id))
        await asyncio.sleep(0)
        quitter.cancel()
        answer = await stayer
        assert answer.content == await thread.expected()
        assert quitter.cancelled()
        assert (await reader.read(thread.thread_id)) == answer
        assert reader.decodes == 1
    finally:
        await reader.close()
