"""Long-polls (``wait=``) that share their work: all requests waiting on one thread (same
``run_id``, same caller) share one poll, and what wakes polls is shared too.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.longpoll.delivery import Parked, Parking, Respond
from evoscientist_final_answer.http.longpoll.held import HeldRequests
from evoscientist_final_answer.server.status_watch import StatusToken
from evoscientist_final_answer.server.view import ServerView
from evoscientist_final_answer.store.api.caller import Credentials, credentials_key
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.watch import UNSEEN

# One read of the judged answer (``http.read.Reads.now``), and
# whether the server lags a checkpoint that looks finished.
ReadWithLag = Callable[[str, str | None, str | None], Awaitable[tuple[FinalAnswer, bool]]]

logger = logging.getLogger(__name__)

API_POLL_SECONDS = 0.1  # reading only through the API: no change signal, poll
# A safety net under the store's change watch: a poll reads again at least this often.
STORE_POLL_SECONDS = 30.0

# thread, run, user, and the credentials the poll's reads carry (a sidecar's caller's)
PollKey = tuple[str, str | None, str | None, Credentials]
NO_STATUS: StatusToken = (UNSEEN, UNSEEN)  # no status watched


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
    """Each thread's poll is a task that reads the answer, publishes it, and sleeps until
    something may have changed; each request only judges what is published (complete?
    changed from its ETag?) and otherwise stays parked on a future. The reader's
    ``ThreadWatch`` checks every waited-on thread's head in one query per change of the
    store (``wait_for_change``), and inside the server the status watch reads every
    waited-on thread's status at once (``server.status_watch``). A poll stops as soon as
    its last request goes. A request whose time is up answers from a read begun then (one
    read for all whose time ran out before it), never from what was last published, so a
    change no watch reports (a run silent past its bound) is still seen."""

    def __init__(
        self,
        read: ReadWithLag,
        reader: CheckpointAnswerReader | None,
        server: ServerView,
        *,
        max_held: int | None = None,
    ) -> None:
        """``read``: one judged read; what wakes a poll: ``reader``'s change watch
        (``wait_for_change``) and ``server``'s status watch."""
        self._read = read
        self.reader = reader
        self.server = server
        self.held = HeldRequests(max_held)
        self._polls: dict[PollKey, _Poll] = {}
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
                return (await self._read(thread_id, run_id, user_id))[0]
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
        key = (thread_id, run_id, user_id, credentials_key())
        poll = self._polls.get(key)
        if poll is None:
            poll = self._polls[key] = _Poll()
            poll.task = asyncio.create_task(self._run(key, poll), context=self._poll_context())
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
        thread_id, run_id, user_id, _credentials = key
        reader = self.reader
        try:
            while poll.waiters:
                token = reader.change_token(thread_id) if reader is not None else None
                statuses = self.server.status_watch()
                status_token = statuses.token(thread_id) if statuses is not None else NO_STATUS
                read = poll.begin_read()
                try:
                    self.reads += 1
                    answer, server_lags = await self._read(thread_id, run_id, user_id)
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
                    change = self._until_server_catches_up(thread_id, answer, status_token)
                else:
                    change = self._until_changed(thread_id, answer, token, status_token)
                await _first_of(change, poll.refresh.wait())
        finally:
            if self._polls.get(key) is poll:
                del self._polls[key]

    async def _until_changed(
        self, thread_id: str, answer: FinalAnswer, token: object, status_token: StatusToken
    ) -> None:
        reader = self.reader
        if reader is None:
            await asyncio.sleep(API_POLL_SECONDS)
            return
        cap = STORE_POLL_SECONDS
        statuses = self.server.status_watch()
        if answer.source == "api":
            # Read through the API because the store lacks the thread or cannot be
            # read. Inside the server the store lacks it until its first checkpoint,
            # which the watch sees, and the status watch sees the run end. Outside, the
            # API's server may keep the thread in a store of its own, which nothing
            # here watches: only polling the API sees it change.
            watch = getattr(reader, "watch", None)
            if watch is None or watch.readable is not True or statuses is None:
                cap = API_POLL_SECONDS
        waits = [asyncio.ensure_future(reader.wait_for_change(thread_id, token, cap))]
        if statuses is not None and statuses.watches(thread_id):  # others: no status
            waits.append(asyncio.ensure_future(statuses.wait(thread_id, status_token, cap)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def _until_server_catches_up(
        self, thread_id: str, answer: FinalAnswer, token: StatusToken
    ) -> None:
        """The checkpoint says the run is over, the server still holds it as running
        (it marks the run done, then the thread idle, a moment later): the server
        view's catch-up check reads the status of every thread in that state (and of
        the run the checkpoint names, where it can: the route's answer turns on the run,
        which the server marks first), and wakes the polls whose status moved."""
        statuses = self.server.status_watch()
        if statuses is None:  # pragma: no cover - only a server's facts lag
            await asyncio.sleep(API_POLL_SECONDS)
            return
        await statuses.wait_caught_up(thread_id, answer.run_id, token)

    def _poll_context(self) -> contextvars.Context:
        """Where a new poll runs. When the server's facts are asked as the caller
        (inside the server), in a copy of its first caller's context: the poll's API
        calls run as that caller (the poll's key holds the caller's identity). Otherwise
        it reads the store for every waiter alike and needs nothing of any one
        request's: a copy would keep the first request's values (its middleware's
        request id, a tracing span) alive as long as the poll runs."""
        if self.server.asks_as_caller:
            return contextvars.copy_context()
        return contextvars.Context()

    async def close(self) -> None:
        for poll in list(self._polls.values()):
            if poll.task is not None:
                poll.task.cancel()
        self._polls.clear()


async def _first_of(*awaitables: Awaitable[object]) -> None:
    """Until the first of ``awaitables`` is done; the others are cancelled."""
    tasks = [asyncio.ensure_future(awaitable) for awaitable in awaitables]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _copy(exc: BaseException) -> BaseException:
    """Each waiter raises its own exception object (one shared object would collect
    every waiter's traceback)."""
    try:
        return type(exc)(*exc.args)
    except Exception:
        return StoreUnavailable(str(exc))
