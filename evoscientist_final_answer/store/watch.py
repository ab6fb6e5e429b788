"""One head check per change of the store, for every thread a long-poll waits on: one
task queries all watched threads' signatures after each change and wakes only the
threads whose signature moved.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable

from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.lru import LruCache

logger = logging.getLogger(__name__)

# Signatures remembered per thread (a thread's last one is the token of its next wait).
KNOWN_SIGNATURES = 4096

HeadsQuery = Callable[[list[str]], Awaitable[dict[str, Hashable]]]
# Returns once the store may have changed since the call began, or after the timeout.
NextChange = Callable[[float], Awaitable[None]]

# A thread no check or read has seen (or one forgotten): its token.
UNSEEN = -1


class ThreadWatch:
    """Each thread's last signature and a generation that moves whenever a new one is
    seen. A caller takes ``token`` before its read and waits on it after: a new
    signature seen since wakes it at once, whoever saw it first — a check, or any read
    of the thread (``remember``). A read that sees a new head first records it, so the
    next check finds nothing new: the read must wake the waiters itself, or the wake is
    lost (issue 20 §2). A caller whose token found the thread unseen cannot tell its own
    read's report from another's: any signature seen since counts as a change, and it
    reads once more (the next token is known).
    """

    def __init__(self, heads: HeadsQuery, next_change: NextChange, *, idle_cap: float) -> None:
        self._heads = heads
        self._next_change = next_change
        self._idle_cap = idle_cap
        self._seen: LruCache[str, tuple[Hashable, int]] = LruCache(KNOWN_SIGNATURES)
        self._waiters: dict[str, int] = {}
        self._wakes: dict[str, asyncio.Future[None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._kick: asyncio.Future[None] | None = None
        self.checks = 0  # batched head queries run (for tests and benchmarks)
        # Whether the last check could read the store: a thread it does not hold yet
        # will show up as a change; otherwise nothing will, and callers must poll.
        self.readable: bool | None = None

    def token(self, thread_id: str) -> int:
        return self._generation(thread_id)

    def seen(self, thread_id: str) -> Hashable:
        """The thread's last signature (``None``: no checkpoint), else ``UNSEEN``."""
        known = self._seen.get(thread_id)
        return UNSEEN if known is None else known[0]

    def _generation(self, thread_id: str) -> int:
        known = self._seen.get(thread_id)
        return UNSEEN if known is None else known[1]

    def remember(self, thread_id: str, signature: Hashable) -> None:
        """A read saw this signature: the thread's waiters wake if it is new."""
        self._record(thread_id, signature)

    def _record(self, thread_id: str, signature: Hashable) -> None:
        """A signature seen for the first time, or one that moved, wakes the thread's
        waiters, whichever path saw it."""
        known = self._seen.get(thread_id)
        if known is not None and known[0] == signature:
            return
        self._seen.put(thread_id, (signature, 0 if known is None else known[1] + 1))
        woken = self._wakes.pop(thread_id, None)
        if woken is not None and not woken.done():
            woken.set_result(None)

    def _moved(self, thread_id: str, since: int) -> bool | None:
        """Whether the thread changed since the token; None while nothing is known."""
        current = self._generation(thread_id)
        if since != UNSEEN:
            return current != since
        return None if current == UNSEEN else True

    async def wait(self, thread_id: str, since: int, timeout: float) -> None:
        """Return once a signature other than the one at ``since`` (a ``token``) is seen
        (at once if it already was), or after ``timeout`` seconds."""
        if self._moved(thread_id, since):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        new = thread_id not in self._waiters
        self._waiters[thread_id] = self._waiters.get(thread_id, 0) + 1
        try:
            if self._task is None or self._task.done():
                self._task = asyncio.create_task(self._run())
            elif new and self._kick is not None and not self._kick.done():
                self._kick.set_result(None)  # check the newcomer now, not at the next change
            while (remaining := deadline - loop.time()) > 0:
                woken = self._wakes.get(thread_id)
                if woken is None or woken.done():
                    woken = self._wakes[thread_id] = loop.create_future()
                await asyncio.wait((woken,), timeout=remaining)
                if not woken.done():
                    return  # time is up
                if self._moved(thread_id, since) is not False:
                    return  # moved, or a first check found it: the caller reads again
        finally:
            self._waiters[thread_id] -= 1
            if not self._waiters[thread_id]:
                del self._waiters[thread_id]
                woken = self._wakes.pop(thread_id, None)
                if woken is not None and not woken.done():
                    woken.cancel()

    async def _run(self) -> None:
        while self._waiters:
            thread_ids = list(self._waiters)
            try:
                self.checks += 1
                heads = await self._heads(thread_ids)
            except StoreUnavailable as exc:
                logger.debug("watch check failed: %s", exc)
                self.readable = False
                heads = None  # nothing learnt: the waiters wait on (or time out)
            if heads is not None:
                self.readable = True
                for thread_id in thread_ids:
                    # Only a thread whose signature is new has waiters to wake: the
                    # others would look, find nothing moved and sleep again (with a
                    # hundred threads watched, that was most of the idle cost).
                    self._record(thread_id, heads.get(thread_id))
            if not self._waiters:
                break
            await self._until_change()

    async def _until_change(self) -> None:
        self._kick = asyncio.get_running_loop().create_future()
        change = asyncio.ensure_future(self._next_change(self._idle_cap))
        try:
            await asyncio.wait((change, self._kick), return_when=asyncio.FIRST_COMPLETED)
        finally:
            change.cancel()
            self._kick = None

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
