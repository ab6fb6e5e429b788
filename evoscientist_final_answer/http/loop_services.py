"""The route's service, carried by the route itself, one per event loop: inside a host app
no ``app.state`` or lifespan is ours, and a service's long-polls, pools and connections
belong to the loop that made them.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable

from evoscientist_final_answer import settings
from evoscientist_final_answer.http import quiet_logs
from evoscientist_final_answer.http.service import FinalAnswerService

logger = logging.getLogger(__name__)

ServiceFactory = Callable[[], FinalAnswerService | Awaitable[FinalAnswerService]]
Loop = asyncio.AbstractEventLoop

# Every task that closes a service when its loop ends, held until it has: a loop keeps
# only weak references to its tasks, and this one waits on a future nobody else holds.
# Held here, not by the routes, and holding the service, not the routes: routes dropped
# while their loop runs on (a test suite that builds an app per test on one loop) close
# their services then (``_close_dropped``), and a task destroyed while pending would
# close nothing.
_PENDING_CLOSERS: set[asyncio.Task[None]] = set()


class Closer:
    """A task that closes one service when ``ended`` is set, or when its loop ends (a
    cancel). Set, not cancelled, by ``close`` and for dropped routes: a task cancelled
    before its first step never runs its body, and would close nothing."""

    def __init__(
        self,
        loop: Loop,
        service: FinalAnswerService,
        when_done: Callable[[asyncio.Task[None]], None],
    ) -> None:
        self.ended: asyncio.Future[None] = loop.create_future()
        self.task = loop.create_task(
            self._close_when_ended(service),
            name="final-answer: close at loop end",
            # Not the first request's context: the task outlives the request.
            context=contextvars.Context(),
        )
        _PENDING_CLOSERS.add(self.task)
        # A callback runs in the context it was added from unless told: here, the first
        # request's, which a pending closer would keep.
        done = contextvars.Context()
        self.task.add_done_callback(_PENDING_CLOSERS.discard, context=done)
        self.task.add_done_callback(when_done, context=done)

    async def _close_when_ended(self, service: FinalAnswerService) -> None:
        try:
            await self.ended
        finally:
            await service.close()

    def end(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


def _close_dropped(closers: weakref.WeakKeyDictionary[Loop, Closer]) -> None:
    """Routes collected while their loops run: each loop closes their service now. Run
    by the collector, on whatever thread it runs, so each goes through its loop."""
    for loop, closer in list(closers.items()):
        if not closer.task.done() and not loop.is_closed():
            loop.call_soon_threadsafe(closer.end)


class LoopServices:
    """Each loop's service, made by the first request on it (``langgraph dev`` imports the
    route before its server, and the in-process API transport, exist).

    No host tells the route that it stops, so what a service opens (aiosqlite's worker
    thread, a PostgreSQL pool, an API client) is closed when the loop that opened it ends
    (``Closer``): ``asyncio.run`` cancels every task still pending when its main coroutine
    returns. Without it a host without a lifespan never exits: aiosqlite's thread is not a
    daemon. Routes collected while their loop runs on close their service then.

    The first request also checks the settings (``settings.validate``): a value that cannot
    be used answers every route request with ``misconfigured``, naming the variable, and is
    logged once."""

    def __init__(
        self,
        factory: ServiceFactory | None = None,
        validate: Callable[[], None] = settings.validate,
    ) -> None:
        self.factory: ServiceFactory = factory or FinalAnswerService.for_this_process
        self.validate = validate
        self._services: weakref.WeakKeyDictionary[Loop, FinalAnswerService] = (
            weakref.WeakKeyDictionary()
        )
        self._making: weakref.WeakKeyDictionary[Loop, asyncio.Lock] = weakref.WeakKeyDictionary()
        # Each loop's closer, for ``close`` to end (``_PENDING_CLOSERS`` keeps it alive).
        self._closers: weakref.WeakKeyDictionary[Loop, Closer] = weakref.WeakKeyDictionary()
        weakref.finalize(self, _close_dropped, self._closers)
        self._reported: str | None = None  # the bad setting already logged

    async def get(self) -> FinalAnswerService:
        """The running loop's service, made on first use (once, however many requests
        arrive while the factory looks for the host's store). Raises
        ``settings.SettingError`` while a setting cannot be used."""
        loop = asyncio.get_running_loop()
        service = self._services.get(loop)
        if service is not None:
            return service
        async with self._making.setdefault(loop, asyncio.Lock()):
            service = self._services.get(loop)
            if service is None:
                self._check_settings()
                # The filters of normal outcomes' log lines go in with the first
                # service, not at import: a host importing us sees no change to its
                # logging until our route serves (and then only our route's lines go).
                quiet_logs.install()
                made = self.factory()
                service = await made if inspect.isawaitable(made) else made
                self._services[loop] = service
                self._closers[loop] = Closer(loop, service, self._forgetter(loop, service))
        return service

    def current(self) -> FinalAnswerService | None:
        """The running loop's service if a request has made it."""
        return self._services.get(asyncio.get_running_loop())

    async def close(self) -> None:
        """Close the running loop's service now (the complete app's lifespan)."""
        loop = asyncio.get_running_loop()
        self._services.pop(loop, None)
        closer = self._closers.pop(loop, None)
        if closer is not None:
            closer.end()
            await asyncio.wait((closer.task,))  # it closes the service

    def _forgetter(
        self, loop: Loop, service: FinalAnswerService
    ) -> Callable[[asyncio.Task[None]], None]:
        """Once a closer is done (its loop ended, or ``close``), the loop's entries go:
        nothing of a dead loop is kept. It holds the maps, not ``self``: a pending closer
        must not keep the routes alive (``_close_dropped``)."""
        services, closers = self._services, self._closers

        def forget(task: asyncio.Task[None]) -> None:
            closer = closers.get(loop)
            if closer is not None and closer.task is task:
                del closers[loop]
            if services.get(loop) is service:
                del services[loop]

        return forget

    def _check_settings(self) -> None:
        try:
            self.validate()
        except settings.SettingError as exc:
            message = str(exc)
            if message != self._reported:
                self._reported = message
                logger.error(
                    "the final-answer route cannot serve: %s; its requests answer 503 "
                    "misconfigured until the setting is fixed and the server restarted",
                    message,
                )
            raise
        self._reported = None
