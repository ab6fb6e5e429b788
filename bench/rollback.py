"""Rollback cost in a large store: ``adelete_for_runs`` of a thread's newest run and of one
in the middle (re-parented, re-materialised), against a scan of every row's metadata
(``json_extract``) under the saver's lock, where every run's writes wait for it; on one
``sessions.db`` of 200,000 rows (one thread of real turns, cloned by SQL).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from bench.timing import interleaved, ms
from EvoScientist.agent import build_graph
from EvoScientist.offline_model import OfflineChatModel
from evoscientist_final_answer.maintenance.sqlite import MaintainedSqliteSaver

ROWS = 200_000
TEMPLATE = "template"
TURNS = 10
ROUNDS = 9
# What the previous ``adelete_for_runs`` ran first, holding the saver's lock.
SCAN_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata "
    "FROM checkpoints WHERE json_extract(CAST(metadata AS TEXT), '$.run_id') "
    "IN (SELECT value FROM json_each(?))"
)
CLONE_CHECKPOINTS_SQL = """
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT printf('clone-%05d', ids.n), checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,
    checkpoint,
    CAST(json_set(CAST(metadata AS TEXT), '$.run_id',
        json_extract(CAST(metadata AS TEXT), '$.run_id') || printf('-%05d', ids.n)) AS BLOB)
FROM checkpoints CROSS JOIN ids WHERE thread_id = ?
"""
CLONE_WRITES_SQL = """
INSERT INTO writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
SELECT printf('clone-%05d', ids.n), checkpoint_ns, checkpoint_id, task_id, task_path, idx,
    channel, type, value
FROM writes CROSS JOIN ids WHERE thread_id = ?
"""


@dataclass
class RollbackReport:
    rows: int = 0
    megabytes: float = 0.0
    index_seconds: float = 0.0
    medians: dict[str, float] = field(default_factory=dict)


async def seed_template(db: Path) -> list[str]:
    """The agent's real turns on one thread, written as the TUI writes (no index)."""
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        graph = build_graph(OfflineChatModel(token_delay=0), checkpointer=saver)
        runs = []
        for turn in range(TURNS):
            run_id = f"run-{turn:02d}"
            config = {"configurable": {"thread_id": TEMPLATE}, "metadata": {"run_id": run_id}}
            await graph.ainvoke({"messages": [HumanMessage(f"question {turn}")]}, config)
            runs.append(run_id)
        return runs


def clone(db: Path, rows: int) -> int:
    """Clones of the template thread until the store holds about ``rows`` rows."""
    with sqlite3.connect(db) as conn:
        (per_thread,) = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = ?", (TEMPLATE,)
        ).fetchone()
        copies = rows // per_thread
        conn.execute("CREATE TEMP TABLE ids(n INTEGER PRIMARY KEY)")
        conn.executemany("INSERT INTO ids(n) VALUES (?)", [(i,) for i in range(copies)])
        conn.execute(CLONE_CHECKPOINTS_SQL, (TEMPLATE,))
        conn.execute(CLONE_WRITES_SQL, (TEMPLATE,))
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return copies


async def measure(report: RollbackReport, work: Path, rows: int = ROWS) -> None:
    db = work / "rollback" / "sessions.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    print("  seeding the template thread", flush=True)
    runs = await seed_template(db)
    print(f"  cloning it to {rows:,} checkpoint rows", flush=True)
    copies = clone(db, rows)
    with sqlite3.connect(db) as conn:
        (report.rows,) = conn.execute("SELECT count(*) FROM checkpoints").fetchone()
    conn.close()
    report.megabytes = db.stat().st_size / 1e6
    clones = iter(range(copies))
    async with MaintainedSqliteSaver.from_conn_string(str(db)) as saver:
        started = time.perf_counter()
        await saver.setup()  # builds the run-id index once, on the first start
        report.index_seconds = time.perf_counter() - started

        async def full_scan() -> None:
            async with saver.lock:
                cur = await saver.conn.execute(SCAN_SQL, (json.dumps([runs[-1]]),))
                await cur.fetchall()

        async def newest_run() -> None:
            await saver.adelete_for_runs([f"{runs[-1]}-{next(clones):05d}"])

        async def middle_run() -> None:
            await saver.adelete_for_runs([f"{runs[TURNS // 2]}-{next(clones):05d}"])

        methods = {
            "full scan (before)": full_scan,
            "rollback of the newest run": newest_run,
            "deletion of a middle run": middle_run,
        }
        report.medians = await interleaved(methods, ROUNDS)
    print("  " + ", ".join(f"{k} {ms(v)}" for k, v in report.medians.items()), flush=True)


def targets(report: RollbackReport) -> list[tuple[str, str, bool]]:
    if not report.medians:
        return []
    scan = report.medians["full scan (before)"]
    newest = report.medians["rollback of the newest run"]
    return [
        (
            f"rollback at {report.rows:,} rows ≥ 10× faster than the full scan",
            f"{ms(newest)} vs {ms(scan)} ({scan / newest:.0f}×)",
            scan / newest >= 10,
        )
    ]


def section(report: RollbackReport) -> list[str]:
    if not report.medians:
        return []
    scan = report.medians["full scan (before)"]
    return [
        "## Rollback in a large store",
        "",
        f"`adelete_for_runs` on `MaintainedSqliteSaver` over a `sessions.db` of "
        f"{report.rows:,} checkpoint rows ({report.megabytes:.0f} MB): one thread of "
        f"{TURNS} real agent turns cloned by SQL, each clone's runs renamed. Each sample "
        "deletes a run of a thread not touched before, as each rollback does. *Full scan* "
        "is the statement the saver ran first before (every row's metadata parsed, under "
        "the saver's lock, where every run's writes wait); now a rollback reads its run's "
        "rows through an index on the run id and the newer rows of its namespace by "
        "primary key. A run in the middle also re-parents the checkpoint after it and "
        "stores its rebuilt messages there as a snapshot. Medians of "
        f"{ROUNDS} interleaved rounds.",
        "",
        "| | median | vs full scan |",
        "|---|---|---|",
        *(
            f"| {name} | {ms(value)} | {scan / value:.0f}× faster |"
            if value != scan
            else f"| {name} | {ms(value)} | |"
            for name, value in report.medians.items()
        ),
        "",
        f"The index is built once, by the saver's setup on the first start after an "
        f"upgrade: {ms(report.index_seconds)} at this size.",
        "",
    ]
