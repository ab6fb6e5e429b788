"""Standalone, with a remote langgraph API to fall back on (``EVOSCIENTIST_LANGGRAPH_URL``):
that server runs no thread for this process, so runs are judged by their silence, except
a run it holds ``busy`` (it may be the server running them), which is vouched for.
"""

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
