"""Long-poll on PostgreSQL: how soon a held request hears of a run's final commit.

The writer is ``AsyncPostgresSaver`` on its own pool (autocommit: a checkpoint is
committed when ``aput`` returns); the held request is the standalone app reading the
same database with ``PostgresAnswerReader``, whose one watcher query per interval
serves every waiter.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from bench.waiting import parked_run
from EvoScientist.checkpointer import setup_postgres
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader

AGENT = "EvoScientist"


class TimedPostgresSaver(AsyncPostgresSaver):
    """The real saver, noting when each checkpoint is committed."""

    commits: list[float]

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().aput(*args, **kwargs)
        self.commits.append(time.perf_counter())
        return result


async def postgres_wake_delays(uri: str, runs: int = 10) -> list[float]:
    """Seconds from the final checkpoint's commit to the held response's return."""
    await setup_postgres(uri)
    service = FinalAnswerService(PostgresAnswerReader(uri, AGENT), None)
    transport = httpx.ASGITransport(app=create_app(lambda: service))
    delays: list[float] = []
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=60) as http,
        AsyncConnectionPool(
            uri,
            min_size=1,
            max_size=2,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        ) as pool,
    ):
        saver = TimedPostgresSaver(pool)  # type: ignore[arg-type]
        for index in range(runs):
            saver.commits = []
            gate = asyncio.Event()
            thread_id = f"pg-wake-{index}"
            run = await parked_run(saver, thread_id, gate)  # type: ignore[arg-type]
            returned: list[float] = []

            async def hold(tid: str = thread_id, out: list[float] = returned) -> Any:
                response = await http.get(f"/api/threads/{tid}/final-answer", params={"wait": 30})
                out.append(time.perf_counter())
                return response.json()

            waiter = asyncio.create_task(hold())
            await asyncio.sleep(0.3)  # parked on the watcher
            gate.set()
            await run
            body = await waiter
            assert body["complete"], body
            delays.append(returned[0] - saver.commits[-1])
    await service.close()
    return delays
