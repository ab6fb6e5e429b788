"""Held requests answered by their poll in one pass (``langgraph_dev/delivery.py``).

``Parking`` on its own, then through the real long-poll: waiters parked on one thread
of a real store, answered by the poll's task when the run's final checkpoint lands.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import Any

import pytest

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.http.longpoll.delivery import Parked, Parking
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.errors import StoreUnavailable
from tests.http.longpoll.test_waiting import parked_waiters, three_step_run, until
from tests.support.seeds import Seeder

pytestmark = pytest.mark.backends("sqlite")


def answer(status: RunStatus = RunStatus.SUCCESS, content: str = "done") -> FinalAnswer:
    return FinalAnswer(thread_id="t", status=status, content=content)


def complete_only(a: FinalAnswer) -> bool:
    return a.complete


class Recorder:
    """A request's way to respond: records what it sent, from which task."""

    def __init__(self, log: list[tuple[str, FinalAnswer]], name: str, fail: bool = False):
        self.log, self.name, self.fail = log, name, fail
        self.renders = 0

    async def __call__(self, a: FinalAnswer, rendered: dict[Hashable, Any]) -> None:
        if "body" not in rendered:
            self.renders += 1
            rendered["body"] = a.content
        self.log.append((self.name, a))
        if self.fail:
            raise ConnectionResetError("the client is gone")


async def test_delivery_answers_every_accepting_request_in_arrival_order() -> None:
    log: list[tuple[str, FinalAnswer]] = []
    parking = Parking()
    recorders = [Recorder(log, f"r{i}") for i in range(5)]
    parked = [Parked(complete_only, recorder) for recorder in recorders]
    for p in parked:
        parking.park(p)

    assert await parking.deliver(answer(RunStatus.RUNNING)) == 0  # nobody accepts
    assert log == [] and len(parking) == 5

    final = answer()
    assert await parking.deliver(final) == 5
    assert [name for name, _ in log] == ["r0", "r1", "r2", "r3", "r4"]
    assert all(p.answered is final for p in parked)
    assert len(parking) == 0
    # One answer rendered once for all the requests that share its representation.
    assert sum(r.renders for r in recorders) == 1


async def test_a_request_that_left_is_not_answered_and_a_broken_one_stops_no_other() -> None:
    log: list[tuple[str, FinalAnswer]] = []
    parking = Parking()
    gone, broken, fine = (
        Parked(complete_only, Recorder(log, "gone")),
        Parked(complete_only, Recorder(log, "broken", fail=True)),
        Parked(complete_only, Recorder(log, "fine")),
    )
    for p in (gone, broken, fine):
        parking.park(p)
    assert parking.leave(gone) is True
    assert await parking.deliver(answer()) == 2
    assert [name for name, _ in log] == ["broken", "fine"]
    assert gone.answered is None and fine.answered is not None
    assert parking.leave(fine) is False  # already answered: the poll sent it


async def test_the_poll_itself_answers_its_parked_waiters_at_the_final_commit(
    seeder: Seeder,
) -> None:
    """Every parked waiter's response is sent by the poll (tasks of its own, all at
    once), in one pass, before any waiter's own task runs again; waiters without a way
    to respond are unchanged."""
    service = FinalAnswerService(seeder.store.reader(), None)
    senders: list[asyncio.Task[Any] | None] = []
    resumed: list[int] = []

    async def respond(a: FinalAnswer, rendered: dict[Hashable, Any]) -> None:
        assert a.complete and a.content == "the final answer"
        senders.append(asyncio.current_task())

    async def parked_waiter(thread_id: str) -> FinalAnswer:
        got = await service.wait(thread_id, None, 20, respond=respond)
        resumed.append(len(senders))  # how many were sent when this one resumed
        return got

    try:
        async with three_step_run(seeder) as run:
            thread_id = run.thread.thread_id
            parked = [asyncio.create_task(parked_waiter(thread_id)) for _ in range(20)]
            plain = asyncio.create_task(service.wait(thread_id, None, 20))
            await until(lambda: len(service.long_polls._polls) == 1)
            await run.finish()
            answers = await asyncio.wait_for(asyncio.gather(*parked, plain), 10)
    finally:
        await service.close()
    assert {a.content for a in answers} == {"the final answer"}
    assert len(senders) == 20
    assert not set(senders) & {*parked, plain}  # the poll's, not the waiters' own
    assert resumed == [20] * 20  # all sent before the first waiter resumed


async def test_an_error_wakes_parked_waiters_to_raise_it(seeder: Seeder) -> None:
    """Parked waiters sleep through outcomes they do not accept, but not through an
    error: each raises it, as a waiter that is not parked does."""
    service = FinalAnswerService(seeder.store.reader(), None)

    async def never_sent(a: FinalAnswer, rendered: dict[Hashable, Any]) -> None:
        raise AssertionError("no answer was accepted")

    try:
        async with three_step_run(seeder) as run:
            waiters = [
                asyncio.create_task(
                    service.wait(run.thread.thread_id, None, 30, respond=never_sent)
                )
                for _ in range(3)
            ]
            await until(lambda: parked_waiters(service) == 3)
            (poll,) = service.long_polls._polls.values()
            await poll.publish(StoreUnavailable("the store went away"))
            outcomes = await asyncio.wait_for(asyncio.gather(*waiters, return_exceptions=True), 5)
    finally:
        await service.close()
    assert all(isinstance(o, StoreUnavailable) for o in outcomes), outcomes


async def test_a_parked_waiter_whose_time_is_up_answers_from_a_read_made_then(
    seeder: Seeder,
) -> None:
    """A parked waiter sleeps through outcomes it does not accept; when its time is up
    it answers from a read made then (here the run, silent past the bound, is lost),
    not from the outcome it saw when it parked."""
    service = FinalAnswerService(seeder.store.reader(), None, silence_bound=1.0)

    async def never_sent(a: FinalAnswer, rendered: dict[Hashable, Any]) -> None:
        raise AssertionError("the poll read nothing new to send")

    try:
        async with three_step_run(seeder) as run:
            waiter = service.wait(run.thread.thread_id, None, 2, respond=never_sent)
            got = await asyncio.wait_for(waiter, 10)
    finally:
        await service.close()
    assert got.complete and got.error is not None and got.error["code"] == "run_lost", got
