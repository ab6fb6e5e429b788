"""No stolen wakes through the route: parked long-polls of every kind all wake when a run
ends, whichever request reads the new head first, and a poll whose time is up answers
from a read made then. The store's watch checks only on the test's word, so the other
request's read is first by construction; everything else is real.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.http.longpoll.test_waiting import three_step_run, until
from tests.store.test_watch import held_checks
from tests.support.seeds import Seeder, route, serving

pytestmark = pytest.mark.backends("sqlite", "postgres")

FINAL = "the final answer"
WAIT = 20
WOKEN_WITHIN = 3.0

Request = Callable[[httpx.AsyncClient, str, dict[str, Any]], Awaitable[httpx.Response]]


async def plain(client: httpx.AsyncClient, path: str, current: dict[str, Any]) -> httpx.Response:
    return await client.get(path)


async def by_run(client: httpx.AsyncClient, path: str, current: dict[str, Any]) -> httpx.Response:
    return await client.get(path, params={"run_id": current["run_id"]})


async def validated(
    client: httpx.AsyncClient, path: str, current: dict[str, Any]
) -> httpx.Response:
    return await client.get(path, headers={"If-None-Match": current["etag"]})


async def new_long_poll(
    client: httpx.AsyncClient, path: str, current: dict[str, Any]
) -> httpx.Response:
    """A long-poll of its own key (by ``run_id``): its first read is a read like any."""
    return await client.get(path, params={"run_id": current["run_id"], "wait": 5})


FIRST_READERS: dict[str, Request] = {
    "plain GET": plain,
    "GET by run_id": by_run,
    "GET with If-None-Match": validated,
    "a new long-poll": new_long_poll,
}


def waiters(current: dict[str, Any], *, by_run_id: bool) -> list[dict[str, Any]]:
    """The parked requests: query and headers of each."""
    held = [
        {"params": {"wait": WAIT}},
        {"params": {"wait": WAIT, "format": "text"}},
        {"params": {"wait": WAIT, "include_reasoning": "true"}},
        {"params": {"wait": WAIT}, "headers": {"If-None-Match": current["etag"]}},
    ]
    if by_run_id:
        held.append({"params": {"wait": WAIT, "run_id": current["run_id"]}})
    return held


def final(response: httpx.Response) -> bool:
    if response.status_code != 200:
        return False
    if response.headers["content-type"].startswith("text/plain"):
        return response.text == FINAL and response.headers["x-answer-complete"] == "true"
    body = response.json()
    return body["complete"] is True and body["content"] == FINAL


def held_count(service: FinalAnswerService) -> int:
    return sum(poll.waiters for poll in service.long_polls._polls.values())


@pytest.mark.parametrize("first", FIRST_READERS)
async def test_every_parked_poll_wakes_whoever_reads_the_new_head_first(
    seeder: Seeder, first: str
) -> None:
    reader = seeder.store.reader()
    clock = held_checks(reader)
    service = FinalAnswerService(reader, None)
    try:
        async with three_step_run(seeder) as run, serving(create_app(lambda: service)) as client:
            path = route(run.thread.thread_id)
            response = await client.get(path)
            current = {"run_id": response.json()["run_id"], "etag": response.headers["etag"]}
            # A new long-poll by run_id needs that key to itself.
            held = waiters(current, by_run_id=first != "a new long-poll")
            tasks = [asyncio.create_task(client.get(path, **request)) for request in held]
            await until(lambda: held_count(service) == len(held))
            # The watch's first check done and parked: one still querying would see the
            # commits below and wake the polls itself.
            await until(lambda: clock.parked >= 1)

            for gate in run.gates:
                gate.set()
            await run.task  # the run is over (in a server: its join returns)
            assert not any(task.done() for task in tasks)
            response = await FIRST_READERS[first](client, path, current)
            assert final(response), response.text
            clock.tick()  # the watch's check comes after: it finds nothing new

            done, pending = await asyncio.wait(tasks, timeout=WOKEN_WITHIN)
            assert not pending, f"{len(pending)} of {len(tasks)} polls slept through the end"
            for task in done:
                assert final(task.result()), task.result().text
    finally:
        await service.close()


async def test_a_poll_whose_time_is_up_answers_from_a_read_made_then(seeder: Seeder) -> None:
    """Nothing is written while the poll waits, yet its answer changes: a run no one
    vouches for is called lost once silent past the bound (``run_lost``). The poll's
    deadline answer is read at the deadline, not what it read when it parked."""
    service = FinalAnswerService(seeder.store.reader(), None, silence_bound=1.0)
    try:
        async with three_step_run(seeder) as run, serving(create_app(lambda: service)) as client:
            path = route(run.thread.thread_id)
            assert (await client.get(path)).json()["status"] == "running"
            body = (await client.get(path, params={"wait": 2})).json()
    finally:
        await service.close()
    assert body["complete"] is True, body
    assert body["error"]["code"] == "run_lost"
