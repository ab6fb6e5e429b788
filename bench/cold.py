"""A restarted server's first read of each thread, against a warm read of it.

*First read*: a reader that has read nothing yet (a fresh process's state: no
answers, no checkpoint facts, no decoded DeltaChannel snapshot), its connection
already open and its schema lookups done, so the decode is what is measured. *Warm
read*: a reader that has read the thread before, its answer cache cleared (the bench's
usual *route in-process*). The two are sampled in turn, round after round.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.cold_floor import Floor
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader

AGENT = "EvoScientist"
FIRST = "first read"
FLOOR = "first-read floor"
SETTLE_SECONDS = 0.05
# A thread no store holds: its lookup warms the connection, not any thread's caches.
WARM_UP_THREAD = "bench-warm-up-no-such-thread"
WARM = "warm read"

ReaderFactory = Callable[[], Awaitable[CheckpointAnswerReader]]


async def first_vs_warm(
    factory: ReaderFactory,
    thread_id: str,
    rounds: int,
    floor: Callable[[CheckpointAnswerReader], Awaitable[Floor | None]] | None = None,
) -> dict[str, float]:
    """Medians of a fresh reader's first read and of a warm reader's uncached read,
    sampled in turn; only the reads are timed (not opening or closing a reader).
    ``floor``: made from the warm reader, the first-read floor sampled with them."""
    warm = await factory()
    await warm.read(thread_id)
    floor_sample = await floor(warm) if floor is not None else None
    samples: dict[str, list[float]] = {FIRST: [], WARM: []}
    if floor_sample is not None:
        samples[FLOOR] = []
    try:
        for _ in range(rounds + 1):  # the first round warms up
            if floor_sample is not None:
                samples[FLOOR].append(await floor_sample())
                await asyncio.sleep(SETTLE_SECONDS)
            warm.forget_answers()
            started = time.perf_counter()
            await warm.read(thread_id)
            samples[WARM].append(time.perf_counter() - started)
            reader = await factory()
            try:
                started = time.perf_counter()
                await reader.read(thread_id)
                samples[FIRST].append(time.perf_counter() - started)
            finally:
                await reader.close()
            # A closed PostgreSQL session's server process exits in the background:
            # let it, so that the next sample does not share the cores with it.
            await asyncio.sleep(SETTLE_SECONDS)
    finally:
        await warm.close()
    return {name: statistics.median(values[1:]) for name, values in samples.items()}


def sqlite_factory(db: Path) -> ReaderFactory:
    async def make() -> CheckpointAnswerReader:
        reader = SqliteAnswerReader(db, AGENT)
        await reader._open()  # the connection is not what a first read costs
        await reader.holds_thread(WARM_UP_THREAD)  # nor the schema's first lookups
        return reader

    return make


def postgres_factory(uri: str) -> ReaderFactory:
    async def make() -> CheckpointAnswerReader:
        from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader

        reader = PostgresAnswerReader(uri, AGENT)
        pool = await reader._open()
        await pool.wait()  # its first connection is made, as a running server's is
        # A new server process loads its catalogs on its first statement: a cost of a
        # fresh connection, which a restarted server pays once, not per thread.
        await reader.holds_thread(WARM_UP_THREAD)
        return reader

    return make
