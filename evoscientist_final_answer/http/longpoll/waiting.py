"""Long-polls (``wait=``) that share their work.

All requests waiting on one thread (same ``run_id``, same caller) share one poll: a
task that reads the answer, publishes it, and sleeps until something may have changed;
each request only judges what is published (complete? changed from its ETag?) and
otherwise stays parked on a future. What wakes a poll is shared too: the reader's
``ThreadWatch`` checks every waited-on thread's head in one query per change of the
store, and inside the server one search reads every waited-on thread's status. The
poll stops as soon as its last request goes (time up, or its client gone). A request
whose time is up answers from a read begun then (one read for all whose time ran out
before it began), never from what was published when it last woke: a change that no
watch reports (a run silent past its bound) is still seen.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Protocol

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.longpoll.delivery import Parked, Parking, Respond
from evoscientist_final_answer.http.longpoll.held import HeldRequests
from evoscientist_final_answer.store.api.reader import (
    ApiAnswerReader,
    api_thread_id,
    inside_langgraph_server,
)
from evoscientist_final_answer.store.api.runtime_status import (
    RuntimeRunStatus,
    RuntimeThreadStatus,
    RuntimeUnavailable,
    runtime_readable,
)
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.watch import UNSEEN, ThreadWatch


class AnswerSource(Protocol):
    """What a long-poll reads through (``service.FinalAnswerService``): its stores, and
    the judged answer with whether the server lags a checkpoint that looks finished."""

    direct: CheckpointAnswerReader | None
    api: ApiAnswerReader | None
    runtime_status: RuntimeThreadStatus

    async def read(
        self, thread_id: str, run_id: str | None = None, *, user_id: str | None = None
    ) -> FinalAnswer: ...

    async def read_with_lag(
        self, thread_id: str, run_id: str | None, user_id: str | None = None
    ) -> tuple[FinalAnswer, bool]: ...


logger = logging.getLogger(__name__)

API_POLL_SECONDS = 0.1  # reading only through the API: no change signal, poll
# How often the server's status of the waited-on threads is read: a run may end
# without writing (a cancel), and the server flips a thread to idle a moment after its
# final checkpoint (``CATCH_UP``). Through the API each read is one search for all
# threads (a request through the server's stack); from the in-memory runtime's own
# table it costs microseconds, so it is read far more often.
SERVER_STATUS_POLL_SECONDS = 2.0
CATCH_UP_POLL_SECONDS = 0.02
RUNTIME_STATUS_POLL_SECONDS = 0.25
RUNTIME_CATCH_UP_POLL_SECONDS = 0.002
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
        self.reads = 0  # reads begun; ``outcome`` is the one of read ``outcome_read``
        self.outcome_read = 0
        # Set by a waiter whose time is up: it answers from a read begun after that
        # moment, never from what it saw when it parked. Every waiter that set it
        # before a read begins shares that read.
        self.refresh = asyncio.Event()
        self.parking = Parking()

    def begin_read(self) -> int:
        self.refresh.clear()
        self.reads += 1
        return self.reads

    async def publish(self, outcome: FinalAnswer | BaseException, read: int | None = None) -> None:
        """``read``: the read the outcome comes from (default: the latest begun)."""
        self.outcome, self.outcome_read = outcome, self.reads if read is None else read
        if isinstance(outcome, FinalAnswer) and self.parking:
            await self.parking.deliver(outcome)
        elif isinstance(outcome, BaseException):
            self.parking.wake_all()
        published, self.published = (
            self.published,
            asyncio.get_running_loop().create_future(),
        )
        published.set_result(None)


class LongPolls:
    def __init__(self, service: AnswerSource, *, max_held: int | None = None) -> None:
        self.service = service
        self.held = HeldRequests(max_held)
        self._polls: dict[PollKey, _Poll] = {}
        self._statuses: ThreadWatch | None = None
        self._catch_up: ThreadWatch | None = None
        self._lagging: dict[str, str | None] = {}  # thread → the run its server lags
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
        respond: Respond | None = None,
    ) -> FinalAnswer:
        """Hold until the run is complete, ``changed(answer)`` holds, or time is up.

        Raises what the read raises (``ThreadNotFound``, ``StoreUnavailable``). A
        caller cancelled (its client gone) leaves at once; the poll stops with its last
        waiter. ``respond``: the caller's way to send its response, for the poll to
        answer it itself (``delivery``); it was used when it has been called.

        Past the cap on held requests (``held``), the answer now, without holding."""
        with self.held.hold() as held:
            if not held:
                return await self.service.read(thread_id, run_id, user_id=user_id)
            return await self._hold(thread_id, run_id, seconds, changed, user_id, respond)

    async def _hold(
        self,
        thread_id: str,
        run_id: str | None,
        seconds: float,
        changed: Callable[[FinalAnswer], bool] | None,
        user_id: str | None,
        respond: Respond | None,
    ) -> FinalAnswer:
        def accepts(answer: FinalAnswer) -> bool:
            return answer.complete or (changed is not None and changed(answer))

        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        key = (thread_id, run_id, user_id)
        poll = self._polls.get(key)
        if poll is None:
            poll = self._polls[key] = _Poll()
            poll.task = asyncio.create_task(self._run(key, poll), context=_poll_context())
        poll.waiters += 1
        parked = None if respond is None else Parked(accepts, respond)
        fresh_from: int | None = None  # time is up: the read that answers, and later
        try:
            judged: object = None
            while True:
                if parked is not None and parked.answered is not None:
                    await parked.woken  # the poll is sending the response
                    return parked.answered
                outcome = poll.outcome
                if outcome is not None and outcome is not judged:
                    if isinstance(outcome, BaseException):
                        raise _copy(outcome)
                    if accepts(outcome):
                        return outcome
                    judged = outcome
                if not isinstance(outcome, FinalAnswer):
                    # The first read is awaited past the wait: it has its own deadline.
                    await asyncio.wait((poll.published,))
                    continue
                if fresh_from is not None:
                    if poll.outcome_read >= fresh_from:
                        return outcome
                    await asyncio.wait((poll.published,))
                    continue
                remaining = deadline - loop.time()
                if remaining <= 0:
                    # What was published may be as old as the last wake: a change no
                    # watch reported since would go unseen. Ask for a read begun now.
                    if parked is not None:
                        poll.parking.leave(parked)
                    fresh_from = poll.reads + 1
                    poll.refresh.set()
                    continue
                if parked is not None:
                    poll.parking.park(parked)  # from now on the poll answers it
                    await asyncio.wait((parked.woken,), timeout=remaining)
                else:
                    await asyncio.wait((poll.published,), timeout=remaining)
        finally:
            if parked is not None:
                poll.parking.leave(parked)
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
                read = poll.begin_read()
                try:
                    self.reads += 1
                    answer, server_lags = await self.service.read_with_lag(
                        thread_id, run_id, user_id
                    )
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # every waiter hears it, as a lone read would
                    await poll.publish(exc, read)
                    return
                await poll.publish(answer, read)
                if answer.complete:
                    return
                if poll.refresh.is_set():
                    continue  # a waiter's time ran out during the read: read again now
                if server_lags:
                    change = self._until_server_catches_up(thread_id, answer, catch_up_token)
                else:
                    change = self._until_changed(thread_id, answer, token, status_token)
                await _first_of(change, poll.refresh.wait())
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
        statuses = self._status_watch()
        if answer.source == "api":
            # Read through the API because the store lacks the thread or cannot be
            # read. Inside the server the store lacks it until its first checkpoint,
            # which the watch sees, and the status watch sees the run end. Outside, the
            # API's server may keep the thread in a store of its own, which nothing
            # here watches: only polling the API sees it change.
            watch = getattr(direct, "watch", None)
            if watch is None or watch.readable is not True or statuses is None:
                cap = API_POLL_SECONDS
        waits = [asyncio.ensure_future(direct.wait_for_change(thread_id, token, cap))]
        if statuses is not None and api_thread_id(thread_id):  # others: no status to watch
            waits.append(asyncio.ensure_future(statuses.wait(thread_id, status_token, cap)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def _until_server_catches_up(
        self, thread_id: str, answer: FinalAnswer, token: int
    ) -> None:
        """The checkpoint says the run is over, the server still holds it as running
        (it marks the run done, then the thread idle, a moment later): one check every
        ``CATCH_UP_POLL_SECONDS`` reads the status of every thread in that state (and,
        from the runtime's own tables, of the run the checkpoint names: the route's
        answer turns on the run, which the server marks first), and wakes the polls
        whose status moved."""
        if self._status_watch() is None or self._catch_up is None:  # pragma: no cover
            await asyncio.sleep(CATCH_UP_POLL_SECONDS)
            return
        self._lagging[thread_id] = answer.run_id
        try:
            await self._catch_up.wait(thread_id, token, SERVER_STATUS_POLL_SECONDS)
        finally:
            self._lagging.pop(thread_id, None)

    def _status_watch(self) -> ThreadWatch | None:
        """Inside the server: the status of every waited-on thread, read for all at once
        (a run may end without writing): from this process's runtime tables every
        ``RUNTIME_STATUS_POLL_SECONDS``, else one search every
        ``SERVER_STATUS_POLL_SECONDS``; and a faster check for the threads whose server
        lags their final checkpoint."""
        api = self.service.api
        if api is None or not inside_langgraph_server():
            return None
        if self._statuses is None:
            runtime = self.service.runtime_status
            run_statuses = RuntimeRunStatus()

            async def through_api(thread_ids: list[str]) -> dict[str, Hashable]:
                # Shared by every caller's polls: asked as the server itself, not as
                # whichever caller started the watch (its task runs in a copy of that
                # caller's context). Only wakes polls; each then reads as its caller.
                _as_server()
                return dict(await api.thread_statuses(thread_ids))

            async def from_runtime(thread_ids: list[str]) -> dict[str, Hashable]:
                try:
                    found = ((t, runtime.status(t)) for t in thread_ids)
                    return {t: status for t, status in found if status is not None}
                except RuntimeUnavailable as exc:  # pragma: no cover - the table went away
                    raise StoreUnavailable(str(exc)) from exc

            async def lagging(thread_ids: list[str]) -> dict[str, Hashable]:
                found = {}
                try:
                    for thread_id in thread_ids:
                        run_id = self._lagging.get(thread_id)
                        run = run_statuses.status(run_id) if run_id is not None else None
                        found[thread_id] = (runtime.status(thread_id), run)
                except RuntimeUnavailable as exc:  # pragma: no cover - the table went away
                    raise StoreUnavailable(str(exc)) from exc
                return found

            def every(seconds: float) -> Callable[[float], Awaitable[None]]:
                async def pause(timeout: float) -> None:
                    await asyncio.sleep(seconds)

                return pause

            # Decided once: this process is the server and reads its own tables, or it
            # asks another runtime through the API.
            if api.url is None and runtime_readable():
                statuses, catch_up = from_runtime, lagging
                status_every, catch_up_every = (
                    RUNTIME_STATUS_POLL_SECONDS,
                    RUNTIME_CATCH_UP_POLL_SECONDS,
                )
            else:
                statuses = catch_up = through_api
                status_every, catch_up_every = SERVER_STATUS_POLL_SECONDS, CATCH_UP_POLL_SECONDS
            self._statuses = ThreadWatch(statuses, every(status_every), idle_cap=status_every)
            self._catch_up = ThreadWatch(catch_up, every(catch_up_every), idle_cap=catch_up_every)
            # What a read saw of a thread's status is that watch's signature (the
            # runtime's catch-up watch signs with the run's status too: its own checks).
            watches = [self._statuses] + ([self._catch_up] if catch_up is statuses else [])

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


async def _first_of(*awaitables: Awaitable[object]) -> None:
    """Until the first of ``awaitables`` is done; the others are cancelled."""
    tasks = [asyncio.ensure_future(awaitable) for awaitable in awaitables]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _poll_context() -> contextvars.Context:
    """Where a new poll runs. Inside the server, in a copy of its first caller's context:
    the poll's API calls run as that caller (the poll's key holds the caller's
    identity). Elsewhere it reads the store for every waiter alike and needs nothing of
    any one request's: a copy would keep the first request's values (its middleware's
    request id, a tracing span) alive as long as the poll runs."""
    return contextvars.copy_context() if inside_langgraph_server() else contextvars.Context()


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
