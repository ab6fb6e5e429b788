"""Inside the server: what wakes a long-poll when the server's status of its thread moves
(a run may end without writing, and the server flips a thread to idle a moment after its
final checkpoint): ``ThreadWatch``es over every waited-on thread's status at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable

from evoscientist_final_answer.store.api.reader import api_thread_id
from evoscientist_final_answer.store.watch import ThreadWatch

# Thread ids → what each one's status reads as (a watch's signature).
StatusQuery = Callable[[list[str]], Awaitable[dict[str, Hashable]]]
# Thread id → the run its server lags (the catch-up check's).
Lagging = dict[str, str | None]
# What a poll saw before its read: each watch's generation of the thread.
StatusToken = tuple[int, int]


class StatusWatch:
    def __init__(
        self,
        statuses: StatusQuery,
        catch_up: Callable[[Lagging], StatusQuery],
        *,
        status_every: float,
        catch_up_every: float,
        catch_up_signs_status: bool,
        caught_up_cap: float,
    ) -> None:
        """``catch_up``: the catch-up query, given the runs lagged by thread.
        ``catch_up_signs_status``: its signature is the thread's status alone (the same
        as ``statuses``'), so a read's own status is its baseline there too.
        ``caught_up_cap``: how long one wait for a lagging server lasts at most."""
        self._lagging: Lagging = {}
        self._caught_up_cap = caught_up_cap
        self.statuses = ThreadWatch(statuses, _every(status_every), idle_cap=status_every)
        self.catch_up = ThreadWatch(
            catch_up(self._lagging), _every(catch_up_every), idle_cap=catch_up_every
        )
        # What a read saw of a thread's status is the signature of these watches.
        self._signed = [self.statuses] + ([self.catch_up] if catch_up_signs_status else [])

    def token(self, thread_id: str) -> StatusToken:
        """Taken before a read, waited on after it."""
        return self.statuses.token(thread_id), self.catch_up.token(thread_id)

    @staticmethod
    def watches(thread_id: str) -> bool:
        """Whether the thread has a server status to watch (the API holds UUIDs only)."""
        return api_thread_id(thread_id)

    def remember(self, thread_id: str, status: str | None) -> None:
        """A read saw the thread's status: the baseline of the next wait, not a change."""
        if api_thread_id(thread_id):
            for watch in self._signed:
                watch.remember(thread_id, status)

    async def wait(self, thread_id: str, token: StatusToken, cap: float) -> None:
        """Until the server's status of the thread moves since ``token``, or ``cap``
        seconds."""
        await self.statuses.wait(thread_id, token[0], cap)

    async def wait_caught_up(self, thread_id: str, run_id: str | None, token: StatusToken) -> None:
        """Until the server's status of the thread, or of ``run_id`` (the run its final
        checkpoint names: the server marks it done before the thread idle), moves since
        ``token``, or ``caught_up_cap`` seconds."""
        self._lagging[thread_id] = run_id
        try:
            await self.catch_up.wait(thread_id, token[1], self._caught_up_cap)
        finally:
            self._lagging.pop(thread_id, None)

    async def close(self) -> None:
        for watch in (self.statuses, self.catch_up):
            await watch.close()


def _every(seconds: float) -> Callable[[float], Awaitable[None]]:
    async def pause(timeout: float) -> None:
        await asyncio.sleep(seconds)

    return pause
