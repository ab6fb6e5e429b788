"""How one run stands, asked of the final-answer route (or of the thread's state) through
outages, until the server has been out of reach for ``give_up_after`` seconds.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from evoscientist_final_answer.recovery.reconcile import (
    Reconciler,
    RunGone,
    ThreadGone,
    retryable_status,
)
from evoscientist_final_answer.recovery.thread.tail import RunLost

GIVE_UP_AFTER = 240.0
RETRY_SECONDS = 0.5
LONG_POLL_SECONDS = 30.0
# Between reads of a server that answers a long-poll at once (no route, or its cap on
# held requests reached).
UNHELD_PAUSE_SECONDS = 1.0


class RunWatch:
    def __init__(
        self,
        http: httpx.AsyncClient,
        thread_id: str,
        run_id: str | None,
        *,
        give_up_after: float = GIVE_UP_AFTER,
    ) -> None:
        self._reconciler = Reconciler(http, thread_id, run_id)
        self.thread_id = thread_id
        self.run_id = run_id
        self.give_up_after = give_up_after

    async def read(self, wait: float = 0.0) -> dict[str, Any]:
        """The run's answer now (``wait``: or once it completes within that many
        seconds). Raises ``RunLost`` when the server no longer knows the run or its
        thread, and the last transport error once the server stayed out of reach."""
        out_of_reach_since: float | None = None
        while True:
            try:
                return await self._reconciler.fetch(wait)
            except RunGone as exc:
                raise RunLost(
                    f"run {self.run_id} of thread {self.thread_id} was lost: the server "
                    "no longer knows it"
                ) from exc
            except ThreadGone as exc:
                raise RunLost(
                    f"run {self.run_id} of thread {self.thread_id} was lost: the server "
                    "no longer knows its thread"
                ) from exc
            except httpx.HTTPStatusError as exc:
                if not retryable_status(exc.response.status_code):
                    raise
                error: Exception = exc
            except httpx.TransportError as exc:
                error = exc
            now = time.monotonic()
            out_of_reach_since = out_of_reach_since or now
            if now - out_of_reach_since >= self.give_up_after:
                raise error
            await asyncio.sleep(RETRY_SECONDS)

    async def end(self) -> dict[str, Any]:
        """The run's answer once it is complete, however long the run takes."""
        while True:
            started = time.monotonic()
            answer = await self.read(LONG_POLL_SECONDS)
            if answer.get("complete"):
                return answer
            if time.monotonic() - started < LONG_POLL_SECONDS / 2:
                await asyncio.sleep(UNHELD_PAUSE_SECONDS)
