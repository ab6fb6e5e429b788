"""Choose the path that answers: the direct checkpoint read, else the langgraph API.

Inside the server the thread's status from the API is read first and takes
precedence over what the newest checkpoint alone suggests.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from EvoScientist import settings
from EvoScientist.answer.result import FinalAnswer
from EvoScientist.store.api_reader import ApiAnswerReader, inside_langgraph_server
from EvoScientist.store.errors import StoreUnavailable, ThreadNotFound
from EvoScientist.store.sqlite_reader import SqliteAnswerReader

logger = logging.getLogger(__name__)

# How often a long-poll re-reads a thread that is still running.
WAIT_POLL_SECONDS = 0.1


class FinalAnswerService:
    def __init__(self, direct: SqliteAnswerReader | None, api: ApiAnswerReader | None) -> None:
        self.direct = direct
        self.api = api

    @classmethod
    def from_environment(cls) -> FinalAnswerService:
        return cls(
            SqliteAnswerReader(settings.sessions_db_path(), settings.agent_name()),
            ApiAnswerReader.for_environment(settings.fallback_api_url()),
        )

    async def close(self) -> None:
        if self.direct is not None:
            await self.direct.close()
        if self.api is not None:
            await self.api.close()

    async def _server_thread_status(self, thread_id: str) -> str | None:
        if self.api is None or not inside_langgraph_server():
            return None
        try:
            return await self.api.thread_status(thread_id)
        except StoreUnavailable:
            logger.warning(
                "thread %s: server status unavailable; using the checkpoint alone", thread_id
            )
            return None

    async def read(self, thread_id: str, run_id: str | None = None) -> FinalAnswer:
        """The answer now. Raises ``ThreadNotFound`` or ``StoreUnavailable``."""
        thread_status = await self._server_thread_status(thread_id)
        direct_failure: StoreUnavailable | None = None
        if self.direct is not None:
            try:
                return await self.direct.read(thread_id, run_id, thread_status)
            except ThreadNotFound:
                # The server may know a thread whose first checkpoint is not written
                # yet, or one it keeps in another store.
                if self.api is None or (thread_status is None and inside_langgraph_server()):
                    raise
            except StoreUnavailable as exc:
                logger.warning("thread %s: direct read failed (%s); trying the API", thread_id, exc)
                direct_failure = exc
        if self.api is None:
            raise direct_failure or StoreUnavailable("no store configured")
        return await self.api.read(thread_id, run_id)

    async def wait(
        self,
        thread_id: str,
        run_id: str | None,
        seconds: float,
        changed: Callable[[FinalAnswer], bool] | None = None,
    ) -> FinalAnswer:
        """Hold until the run is complete, ``changed(answer)`` holds, or time is up."""
        deadline = time.monotonic() + seconds
        answer = await self.read(thread_id, run_id)
        while not answer.complete and not (changed is not None and changed(answer)):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            await asyncio.sleep(min(WAIT_POLL_SECONDS, remaining))
            answer = await self.read(thread_id, run_id)
        return answer
