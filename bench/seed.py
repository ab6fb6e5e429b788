"""Build the benchmark's stores: through a real ``langgraph dev`` (so its
``/threads/{id}/state`` knows the threads) and directly with ``AsyncSqliteSaver``."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph_sdk import get_client

from bench.graphs import Mode, build

RECURSION_LIMIT = 25_000


async def thread_via_server(url: str, mode: Mode, size: int) -> str:
    client = get_client(url=url, api_key=None, timeout=600)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        await client.runs.wait(
            thread_id,
            "bench",
            input={},
            config={"configurable": {"mode": mode, "size": size}, "recursion_limit": 1000},
        )
        return thread_id
    finally:
        await client.aclose()


async def thread_direct(db: Path, thread_id: str, mode: Mode, size: int, **kwargs: Any) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        graph = build(mode, size, checkpointer=saver, **kwargs)
        config = {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}
        await graph.ainvoke({}, config)


async def long_thread(db: Path, thread_id: str, checkpoints: int) -> None:
    """A 20-message thread behind ``checkpoints`` checkpoints (steps that touch no messages)."""
    from bench.graphs import counting_graph

    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        graph = counting_graph(checkpoints, checkpointer=saver)
        config = {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}
        await graph.ainvoke({}, config)


def clone_threads(db: Path, template_thread: str, copies: int) -> None:
    """``copies`` more threads with the template's rows (real blobs, other thread ids)."""
    with sqlite3.connect(db) as conn:
        for table in ("checkpoints", "writes"):
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            rest = ", ".join(c for c in columns if c != "thread_id")
            conn.execute("CREATE TEMP TABLE ids(n INTEGER PRIMARY KEY)")
            conn.executemany("INSERT INTO ids(n) VALUES (?)", [(i,) for i in range(copies)])
            conn.execute(
                f"INSERT INTO {table} (thread_id, {rest}) "
                f"SELECT printf('clone-%05d', ids.n), {rest} FROM {table} CROSS JOIN ids "
                f"WHERE {table}.thread_id = ?",
                (template_thread,),
            )
            conn.execute("DROP TABLE ids")
    conn.close()


def copy_db(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    shutil.copyfile(source, target)
