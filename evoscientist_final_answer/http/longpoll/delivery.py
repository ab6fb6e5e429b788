"""Held requests answered by their poll, in one pass, the moment it publishes: a thousand
requests woken one by one would leave in lockstep, the first about when the last does.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.gc_tuning import collector_paused

logger = logging.getLogger(__name__)

# Sends the response for an answer; the dict is shared by every response sent for the
# same answer (what one request renders, the next one with the same key sends a copy
# of: ``held_response``).
Respond = Callable[[FinalAnswer, dict[Hashable, Any]], Awaitable[None]]


@dataclass(eq=False)
class Parked:
    """A parked request sleeps on ``woken`` alone: the poll's other outcomes (a step of
    the run it does not accept) do not wake it, only its answer or an error."""

    accepts: Callable[[FinalAnswer], bool]
    respond: Respond
    # Set once the poll takes it on; ``woken`` once its response is out.
    answered: FinalAnswer | None = None
    woken: asyncio.Future[None] = field(init=False)
    # Where its response is sent from: the request's own (made in its task).
    context: contextvars.Context = field(init=False)

    def __post_init__(self) -> None:
        self.woken = asyncio.get_running_loop().create_future()
        self.context = _own_context()

    def wake(self) -> None:
        if not self.woken.done():
            self.woken.set_result(None)


class Parking:
    """The parked requests of one poll, in arrival order.

    A request the route can answer from elsewhere (``held_response``) parks here with its
    ``HeldResponse``; the poll, on publishing an answer the request accepts, sends every
    such response itself, all at once, before any request's own task runs again, with one
    answer rendered once per representation. Each response is sent in the context of the
    request it answers (``Parked.context``), so host middleware reading a context variable
    in its ``send`` sees that request's values. A parked request its poll did not answer
    (its wait ran out, or the outcome is an error) leaves and answers for itself."""

    def __init__(self) -> None:
        self._parked: dict[Parked, None] = {}

    def __len__(self) -> int:
        return len(self._parked)

    def park(self, parked: Parked) -> None:
        self._parked[parked] = None

    def wake_all(self) -> None:
        """Every parked request judges the outcome itself (an error to raise)."""
        for parked in self._parked:
            parked.wake()

    def leave(self, parked: Parked) -> bool:
        """Take a request out; False when the poll already answered it."""
        if parked not in self._parked:
            return False
        del self._parked[parked]
        return True

    async def deliver(self, answer: FinalAnswer) -> int:
        """Send the response of every parked request that accepts ``answer``.

        All at once: through a host's middleware a send waits on other tasks (a
        ``BaseHTTPMiddleware`` hands each message to a task of its own), and a
        thousand of them sent one after another would each wait out the event loop's
        rounds alone. The requests' tasks are woken after the whole pass: each then
        ends its response and runs what follows it (the host's logs and cleanup),
        which would otherwise run between the sends."""
        accepted = [parked for parked in self._parked if parked.accepts(answer)]
        for parked in accepted:
            del self._parked[parked]
            parked.answered = answer
        rendered: dict[Hashable, Any] = {}
        loop = asyncio.get_running_loop()
        try:
            with collector_paused():  # no collection midway through the wave
                # Each ``respond`` is called here, in order: a request knows at once
                # that its response is on its way (``held_response``). Each send is a
                # task, as ``gather`` would make it, but in its request's context.
                sends = [
                    loop.create_task(
                        _guarded(parked.respond(answer, rendered)), context=parked.context
                    )
                    for parked in accepted
                ]
                await asyncio.gather(*sends)
        finally:
            for parked in accepted:
                parked.wake()
        return len(accepted)


def _own_context() -> contextvars.Context:
    """The calling task's context: the object itself where Python exposes it (3.12's
    ``Task.get_context``), so that what the host's ``send`` sets stays with the request
    as when it sends for itself; else a copy, with the same values while the request
    is parked (its task runs nothing until it is woken)."""
    task = asyncio.current_task()
    get_context = getattr(task, "get_context", None)
    if get_context is None:
        return contextvars.copy_context()
    context: contextvars.Context = get_context()
    return context


async def _guarded(send: Awaitable[None]) -> None:
    try:
        await send
    except Exception as exc:  # one client's broken socket is not the others'
        logger.debug("a parked response could not be sent: %r", exc)
