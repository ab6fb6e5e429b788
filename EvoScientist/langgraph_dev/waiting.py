"""Long-polls (``wait=``) that share their work.

All requests waiting on one thread (same ``run_id``, same caller) share one poll: a
task that reads the answer, publishes it, and sleeps until something may have changed;
each request only judges what is published (complete? changed from its ETag?) and
otherwise stays parked on a future. What wakes a poll is shared too: the reader's
``ThreadWatch`` checks every waited-on thread's head in one query per change of the
store, and inside the server one search reads every waited-on thread's status. The
poll stops as soon as its last request goes (time up, or its client gone).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING

from EvoScientist.answer.result import FinalAnswer
from EvoScientist.store.api_reader import api_thread_id, inside_langgraph_server
from EvoScientist.store.errors import StoreUnavailable
from EvoScientist.store.watch import UNSEEN, ThreadWatch

if TYPE_CHECKING:
    from EvoScientist.langgraph_dev.service import FinalAnswerService

logger = logging.getLogger(__name__)

API_POLL_SECONDS = 0.1  # reading only through the API: no change signal, poll
CATCH_UP_POLL_SECONDS = 0.02  # the checkpoint says done, the server still says busy
SERVER_STATUS_POLL_SECONDS = 2.0  # a run may end without writing: one search for all
# A safety net under the store's change watch: a poll reads again at least this often.
STORE_POLL_SECONDS = 30.0

PollKey = tuple[str, str | None, str | None]  # thread, run, user


class _Poll:
    """One thread's shared poll: the latest outcome and the future of the next one."""

    def __init__(self) -> None:
        self.waiters = 0
        self.outcome: FinalAnswer | BaseException | None = None
        self.published: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None
        self.reads = 0

    def publish(self, outcome: FinalAnswer | BaseException) -> None:
        self.outcome = outcome
        published, self.published = (
            self.published,
            asyncio.get_running_loop().create_future(),
        )
        published.set_result(None)


class LongPolls:
    def __init__(self, service: FinalAnswerService) -> None:
        self.service = service
        self._polls: dict[PollKey, _Poll] = {}
        self._statuses: ThreadWatch | None = None
        self._catch_up: ThreadWatch | None = None
        self.reads = 0  # answer reads run by polls (for tests and benchmarks)

    @property
    def active(self) -> int:
        """Polls running now (each serving every waiter of its key)."""
        return len(self._polls)

    async def wait(
        self,
        thread_id: str,
        run_id: str | None,
        seconds: float,
        changed: Callable[[FinalAnswer], bool] | None = None,
        *,
        user_id: str | None = None,
    ) -> FinalAnswer:
        """Hold until the run is complete, ``changed(answer)`` holds, or time is up.

        Raises what the read raises (``ThreadNotFound``, ``StoreUnavailable``). A
        caller cancelled (its client gone) leaves at once; the poll stops with its last
        waiter."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        key = (thread_id, run_id, user_id)
        poll = self._polls.get(key)
        if poll is None:
            poll = self._polls[key] = _Poll()
            # The caller's context goes with it: inside the server the poll's API calls
            # run as this caller (the key holds the caller's identity).
            poll.task = asyncio.create_task(self._run(key, poll))
        poll.waiters += 1
        try:
            judged: object = None
            while True:
                outcome = poll.outcome
                if outcome is not None and outcome is not judged:
                    if isinstance(outcome, BaseException):
                        raise _copy(outcome)
                    if outcome.complete or (changed is not None and changed(outcome)):
                        return outcome
                    judged = outcome
                remaining = deadline - loop.time()
                if isinstance(outcome, FinalAnswer) and remaining <= 0:
                    return outcome
                # The first read is awaited past the wait: it has its own deadline.
                timeout = remaining if isinstance(outcome, FinalAnswer) else None
                await asyncio.wait((poll.published,), timeout=timeout)
        finally:
            poll.waiters -= 1
            if not poll.waiters and poll.task is not None and not poll.task.done():
                poll.task.cancel()  # nobody left: no further reads
                if self._polls.get(key) is poll:
                    del self._polls[key]

    async def _run(self, key: PollKey, poll: _Poll) -> None:
        thread_id, run_id, user_id = key
        direct = self.service.direct
        try:
            while poll.waiters:
                token = direct.change_token(thread_id) if direct is not None else None
                statuses = self._status_watch()
                status_token = statuses.token(thread_id) if statuses is not None else UNSEEN
                catch_up = self._catch_up
                catch_up_token = catch_up.token(thread_id) if catch_up is not None else UNSEEN
                try:
                    self.reads += 1
                    poll.reads += 1
                    answer, server_lags = await self.service._read(thread_id, run_id, user_id)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # every waiter hears it, as a lone read would
                    poll.publish(exc)
                    return
                poll.publish(answer)
                if answer.complete:
                    return
                if server_lags:
                    await self._until_server_catches_up(thread_id, catch_up_token)
                else:
                    await self._until_changed(thread_id, answer, token, status_token)
        finally:
            if self._polls.get(key) is poll:
                del self._polls[key]

    async def _until_changed(
        self, thread_id: str, answer: FinalAnswer, token: object, status_token: int
    ) -> None:
        direct = self.service.direct
        if direct is None:
            await asyncio.sleep(API_POLL_SECONDS)
            return
        cap = STORE_POLL_SECONDS
        if answer.source == "api":
            # Read through the API because the store lacks the thread (its first
            # checkpoint is not written) or cannot be read: the watch sees the first
            # case end; only the second needs the API polled.
            watch = getattr(direct, "watch", None)
            if watch is None or watch.readable is not True:
                cap = API_POLL_SECONDS
        waits = [asyncio.ensure_future(direct.wait_for_change(thread_id, token, cap))]
        statuses = self._status_watch()
        if statuses is not None and api_thread_id(thread_id):  # others: no status to watch
            waits.append(asyncio.ensure_future(statuses.wait(thread_id, status_token, cap)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def _until_server_catches_up(self, thread_id: str, token: int) -> None:
        """The checkpoint says the run is over, the server still says busy (it flips a
        moment later): one search every ``CATCH_UP_POLL_SECONDS`` reads the status of
        every thread in that state, and wakes the polls whose status moved."""
        if self._status_watch() is None or self._catch_up is None:  # pragma: no cover
            await asyncio.sleep(CATCH_UP_POLL_SECONDS)
            return
        await self._catch_up.wait(thread_id, token, SERVER_STATUS_POLL_SECONDS)

    def _status_watch(self) -> ThreadWatch | None:
        """Inside the server: the status of every waited-on thread, one search for all
        every ``SERVER_STATUS_POLL_SECONDS`` (a run may end without writing); and a
        faster one for the threads whose server lags their final checkpoint."""
        api = self.service.api
        if api is None or not inside_langgraph_server():
            return None
        if self._statuses is None:

            async def statuses(thread_ids: list[str]) -> dict[str, Hashable]:
                # Shared by every caller's polls: asked as the server itself, not as
                # whichever caller started the watch (its task runs in a copy of that
                # caller's context). Only wakes polls; each then reads as its caller.
                _as_server()
                return dict(await api.thread_statuses(thread_ids))

            def every(seconds: float) -> Callable[[float], Awaitable[None]]:
                async def pause(timeout: float) -> None:
                    await asyncio.sleep(seconds)

                return pause

            self._statuses = ThreadWatch(
                statuses, every(SERVER_STATUS_POLL_SECONDS), idle_cap=SERVER_STATUS_POLL_SECONDS
            )
            self._catch_up = ThreadWatch(
                statuses, every(CATCH_UP_POLL_SECONDS), idle_cap=CATCH_UP_POLL_SECONDS
            )
            watches = (self._statuses, self._catch_up)

            def observed(thread_id: str, status: str | None) -> None:
                for watch in watches:
                    watch.remember(thread_id, status)

            api.on_status = observed
        return self._statuses

    async def close(self) -> None:
        for poll in list(self._polls.values()):
            if poll.task is not None:
                poll.task.cancel()
        self._polls.clear()
        for watch in (self._statuses, self._catch_up):
            if watch is not None:
                await watch.close()


def _as_server() -> None:
    try:
        from langgraph_api.utils import set_auth_ctx
    except ImportError:  # pragma: no cover - another server version
        return
    set_auth_ctx(None, None)


def _copy(exc: BaseException) -> BaseException:
    """Each waiter raises its own exception object (one shared object would collect
    every waiter's traceback)."""
    try:
        return type(exc)(*exc.args)
    except Exception:
        return StoreUnavailable(str(exc))
