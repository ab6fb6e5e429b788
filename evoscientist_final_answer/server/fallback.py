"""Standalone, with a remote langgraph API to fall back on (``EVOSCIENTIST_LANGGRAPH_URL``).

That server runs no thread for this process: the route reads its checkpoints and judges
its runs by their silence. But it may be the server running them (the standalone app
beside a ``langgraph dev`` whose ``sessions.db`` it reads): a run it holds ``busy`` is
vouched for, however long it has been silent. And who started a thread's runs comes
from its run records (``server.api``)."""

from __future__ import annotations

import logging

from evoscientist_final_answer.server.api import api_run_owners
from evoscientist_final_answer.server.view import ServerView
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.errors import StoreUnavailable

logger = logging.getLogger(__name__)


class FallbackApi(ServerView):
    def __init__(self, api: ApiAnswerReader) -> None:
        self.api = api

    async def run_owners(self, thread_id: str) -> set[str]:
        try:
            return await api_run_owners(self.api.client, thread_id)
        except StoreUnavailable:
            return set()  # nothing learnt: the API's own answer decides

    async def busy_elsewhere(self, thread_id: str) -> bool:
        try:
            return await self.api.thread_status(thread_id) == "busy"
        except StoreUnavailable as exc:
            logger.warning("thread %s: the fallback API's status unavailable: %s", thread_id, exc)
            return False
