"""The standalone app in-process over ASGI, reading one ``sessions.db`` directly: what
the benchmark's in-process columns call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from bench.asgi import call_asgi, route
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader

AGENT = "EvoScientist"


class InProcess:
    """The standalone app in-process, reading one store directly."""

    def __init__(self, db: Path) -> None:
        self.service = FinalAnswerService(SqliteAnswerReader(db, AGENT), None)
        self.app = create_app(lambda: self.service)
        transport = httpx.ASGITransport(app=self.app)
        self.client = httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=90)

    async def cold(self, thread_id: str) -> bytes:
        """A request whose checkpoint is not cached: the decode is measured."""
        assert self.service.direct is not None
        self.service.direct.forget_answers()
        return await self.fetch(thread_id)

    async def fetch(self, thread_id: str) -> bytes:
        status, body = await call_asgi(self.app, route(thread_id))
        if status != 200:
            raise RuntimeError(f"{status}: {body[:200]!r}")
        return body

    async def get(self, thread_id: str, **params: Any) -> httpx.Response:
        response = await self.client.get(route(thread_id), params=params)
        response.raise_for_status()
        return response

    async def close(self) -> None:
        await self.client.aclose()
        await self.service.close()
