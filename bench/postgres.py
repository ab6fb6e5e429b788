"""The Postgres column: the same threads, written by the same graphs through
``AsyncPostgresSaver``, read by ``PostgresAnswerReader`` in-process."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.asgi import call_asgi
from bench.graphs import Mode, build
from EvoScientist.checkpointer import postgres_checkpointer
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from tests.support.postgres import session_database, unreachable_reason

RECURSION_LIMIT = 1_000


@contextmanager
def database() -> Iterator[str | None]:
    """A throwaway database, or None (with the reason printed) when there is no server."""
    reason = unreachable_reason()
    if reason is not None:
        print(f"  no Postgres column: {reason}", flush=True)
        yield None
        return
    with session_database() as uri:
        yield uri


async def seed(uri: str, mode: Mode, size: int) -> str:
    thread_id = f"{mode}-{size}"
    async with postgres_checkpointer(uri) as saver:
        graph = build(mode, size, checkpointer=saver)
        config = {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}
        await graph.ainvoke({}, config)
    return thread_id


class PostgresInProcess:
    """The standalone app over ASGI, reading Postgres directly, answer cache cleared."""

    def __init__(self, uri: str) -> None:
        self.service = FinalAnswerService(PostgresAnswerReader(uri, "EvoScientist"), None)
        self.app = create_app(lambda: self.service)

    async def cold(self, thread_id: str) -> Any:
        assert self.service.direct is not None
        self.service.direct.forget_answers()
        status, body = await call_asgi(self.app, f"/api/threads/{thread_id}/final-answer")
        if status != 200:
            raise RuntimeError(f"{status}: {body[:200]!r}")
        return body

    async def close(self) -> None:
        await self.service.close()
