"""The route's service, carried by the route itself, one per event loop.

Inside a host app, ``request.app`` is the host's app: a service kept in its
``app.state`` is not ours to keep. And no lifespan of ours runs there, so the service
cannot be made at start-up: it is made by the first request, on the loop that serves
it (langgraph dev imports the route before its server, and the in-process API
transport, exist). One per loop, because a service's long-polls, pools and
connections belong to the loop that made them (a test client runs its own).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable

from evoscientist_final_answer.http import quiet_logs
from evoscientist_final_answer.http.service import FinalAnswerService

logger = logging.getLogger(__name__)

ServiceFactory = Callable[[], FinalAnswerService | Awaitable[FinalAnswerService]]
Loop = asyncio.AbstractEventLoop


class LoopServices:
    def __init__(self, factory: ServiceFactory | None = None) -> None:
        self.factory: ServiceFactory = factory or FinalAnswerService.for_this_process
        self._services: weakref.WeakKeyDictionary[Loop, FinalAnswerService] = (
            weakref.WeakKeyDictionary()
        )
        self._making: weakref.WeakKeyDictionary[Loop, asyncio.Lock] = weakref.WeakKeyDictionary()

    async def get(self) -> FinalAnswerService:
        """The running loop's service, made on first use (once, however many requests
        arrive while the factory looks for the host's store)."""
        loop = asyncio.get_running_loop()
        service = self._services.get(loop)
        if service is not None:
            return service
        async with self._making.setdefault(loop, asyncio.Lock()):
            service = self._services.get(loop)
            if service is None:
                # The filters of normal outcomes' log lines go in with the first
                # service, not at import: a host importing us sees no change to its
                # logging until our route serves (and then only our route's lines go).
                quiet_logs.install()
                made = self.factory()
                service = await made if inspect.isawaitable(made) else made
                self._services[loop] = service
        return service

    def current(self) -> FinalAnswerService | None:
        """The running loop's service if a request has made it."""
        return self._services.get(asyncio.get_running_loop())

    async def close(self) -> None:
        """Close the running loop's service (the complete app's lifespan; a host without
        it leaves the service to the process's end, as its own clients are)."""
        service = self._services.pop(asyncio.get_running_loop(), None)
        if service is not None:
            await service.close()
