"""A restarted server's first read of each thread, against a warm read of it.

*First read*: a reader that has read nothing yet (a fresh process's state: no
answers, no checkpoint facts, no decoded DeltaChannel snapshot), its connection
already open, so the decode is what is measured. *Warm read*: a reader that has read
the thread before, its answer cache cleared (the bench's usual *route in-process*).
Both are sampled in the same interleaved rounds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.timing import interleaved
from EvoScientist.store.base import CheckpointAnswerReader
from EvoScientist.store.sqlite_reader import SqliteAnswerReader

AGENT = "EvoScientist"
FIRST = "first read"
WARM = "warm read"

ReaderFactory = Callable[[], Awaitable[CheckpointAnswerReader]]


async def first_vs_warm(factory: ReaderFactory, thread_id: str, rounds: int) -> dict[str, float]:
    """Medians of a fresh reader's first read and of a warm reader's uncached read."""
    warm = await factory()
    await warm.read(thread_id)

    async def first() -> None:
        reader = await factory()
        try:
            await reader.read(thread_id)
        finally:
            await reader.close()

    async def again() -> None:
        warm.forget_answers()
        await warm.read(thread_id)

    try:
        return await interleaved({FIRST: first, WARM: again}, rounds)
    finally:
        await warm.close()


def sqlite_factory(db: Path) -> ReaderFactory:
    async def make() -> CheckpointAnswerReader:
        reader = SqliteAnswerReader(db, AGENT)
        await reader._open()  # the connection is not what a first read costs
        return reader

    return make


def postgres_factory(uri: str) -> ReaderFactory:
    async def make() -> CheckpointAnswerReader:
        from EvoScientist.store.postgres_reader import PostgresAnswerReader

        reader = PostgresAnswerReader(uri, AGENT)
        pool = await reader._open()
        await pool.wait()  # its first connection is made, as a running server's is
        return reader

    return make
