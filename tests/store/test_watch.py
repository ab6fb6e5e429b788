"""The store's thread watch (``store/watch.py``) on the real readers: a new head wakes every
waiter of its thread, whichever path sees it first. Checks run only when the test says
(``CheckClock``), so the order of "a commit, a read, a check" is the test's.
"""

from __future__ import annotations

import asyncio

import pytest

from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.watch import UNSEEN, ThreadWatch
from tests.http.longpoll.test_waiting import reached, three_step_run, until
from tests.support.seeds import Seeder

pytestmark = pytest.mark.backends("sqlite", "postgres")

# Long enough that a waiter still waiting when the test gives up was not woken.
WAIT_SECONDS = 30.0
WOKEN_WITHIN = 2.0


class CheckClock:
    """The watch's "the store may have changed": only when ``tick`` is called (a
    newcomer's first check still runs at once, as the watch does for one)."""

    def __init__(self) -> None:
        self._tick = asyncio.Event()
        # Times the watch finished a check and parked here: a check counted in
        # ``watch.checks`` may still be querying, and would see a commit made meanwhile.
        self.parked = 0

    async def __call__(self, timeout: float) -> None:
        self.parked += 1
        await self._tick.wait()
        self._tick.clear()

    def tick(self) -> None:
        self._tick.set()


def held_checks(reader: CheckpointAnswerReader) -> CheckClock:
    """The reader's watch, with its own head query, checking on the test's word."""
    clock = CheckClock()
    reader.watch = ThreadWatch(reader._watch_heads, clock, idle_cap=WAIT_SECONDS)  # type: ignore[attr-defined]
    return clock


async def test_a_read_that_sees_a_new_head_first_wakes_the_waiters(seeder: Seeder) -> None:
    """A commit, then a plain read of the thread, then the watch's check: the read took
    the news first, the check finds nothing it has not seen, and the waiter must
    still wake (it waited 30 s before: the read recorded the head without waking it)."""
    reader = seeder.store.reader()
    clock = held_checks(reader)
    try:
        async with three_step_run(seeder) as run:
            thread_id = run.thread.thread_id
            await reader.read(thread_id)
            token = reader.change_token(thread_id)
            waiting = asyncio.create_task(reader.wait_for_change(thread_id, token, WAIT_SECONDS))
            await until(lambda: clock.parked == 1)  # the newcomer's check found no change
            run.gates[0].set()
            await reached(run.thread, ("two",))
            assert not waiting.done()
            await reader.read(thread_id)  # sees the new head before any check
            clock.tick()  # and the check after it finds nothing new
            await asyncio.wait_for(waiting, WOKEN_WITHIN)
    finally:
        await reader.close()


async def test_a_waiter_whose_token_predates_every_sighting_wakes_on_another_read(
    seeder: Seeder,
) -> None:
    """A waiter whose token found the thread unseen (its own read went elsewhere: the
    API, a store not readable yet) while another read was the first to see a head:
    that head is news to it, not its baseline."""
    reader = seeder.store.reader()
    held_checks(reader)
    try:
        thread = await seeder.paused_before()
        token = reader.change_token(thread.thread_id)
        assert token == UNSEEN
        await reader.read(thread.thread_id)  # another request's read, first to see it
        await asyncio.wait_for(
            reader.wait_for_change(thread.thread_id, token, WAIT_SECONDS), WOKEN_WITHIN
        )
    finally:
        await reader.close()
