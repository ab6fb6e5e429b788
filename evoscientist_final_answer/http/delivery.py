"""Held requests answered by their poll, in one pass, the moment it publishes.

A thousand requests held on one thread all wake when its poll publishes the final
answer. Left to themselves, each resumes its own task and needs several scheduling
rounds to build and send its response, so the event loop moves them forward in
lockstep and the first leaves about when the last does. A request that entered through
the front door (``front_door``) can instead be *parked*: it hands the poll a way to
send its response, and the poll, on publishing an answer the request accepts, sends
every such response itself, one after another, before any other task runs (a send
through the front door is a non-suspending write to the socket). One answer is
rendered once for all the requests that asked for the same representation.

A parked request that its poll did not answer (its wait ran out, or the outcome is an
error) leaves the parking and answers for itself, as every request did before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.collector import collector_paused

logger = logging.getLogger(__name__)

# Sends the response for an answer; the dict is shared by every response sent for the
# same answer (what one request renders, the next one with the same key reuses).
Respond = Callable[[FinalAnswer, dict[Hashable, Any]], Awaitable[None]]


@dataclass(eq=False)
class Parked:
    """A parked request sleeps on ``woken`` alone: the poll's other outcomes (a step of
    the run it does not accept) do not wake it, only its answer or an error."""

    accepts: Callable[[FinalAnswer], bool]
    respond: Respond
    answered: FinalAnswer | None = None  # set once the poll has sent its response
    woken: asyncio.Future[None] = field(init=False)

    def __post_init__(self) -> None:
        self.woken = asyncio.get_running_loop().create_future()

    def wake(self) -> None:
        if not self.woken.done():
            self.woken.set_result(None)


class Parking:
    """The parked requests of one poll, in arrival order."""

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
        """Send the response of every parked request that accepts ``answer``."""
        accepted = [parked for parked in self._parked if parked.accepts(answer)]
        rendered: dict[Hashable, Any] = {}
        with collector_paused():  # no collection midway through the wave
            for parked in accepted:
                if parked not in self._parked:
                    continue  # left while an earlier send waited on its socket
                del self._parked[parked]
                parked.answered = answer
                parked.wake()
                try:
                    await parked.respond(answer, rendered)
                except Exception as exc:  # one client's broken socket is not the others'
                    logger.debug("a parked response could not be sent: %r", exc)
        return len(accepted)
