"""Long-polls share their work and end with their client: head queries counted on the real
readers (SQLite and PostgreSQL) with one waiter and many; a held request dropped over a
real socket.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from tests.support.seeds import SeededThread, Seeder, gated, node_graph, route, serving
from tests.support.servers import listening

MANY = 40

pytestmark = pytest.mark.backends("sqlite", "postgres")


def count_calls(reader: CheckpointAnswerReader, name: str) -> list[int]:
    """Count completed calls of one of the reader's methods; each still runs for real.
    Counted once done, not when called: a read still waiting for its connection (a
    PostgreSQL pool's first, prepared as it opens) has not seen the store yet."""
    original = getattr(reader, name)
    calls = [0]

    async def counted(*args: Any, **kwargs: Any) -> Any:
        try:
            return await original(*args, **kwargs)
        finally:
            calls[0] += 1

    setattr(reader, name, counted)
    return calls


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> float:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)
    return time.monotonic() - started


async def reached(thread: SeededThread, nodes: tuple[str, ...]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if (await thread.state()).next == nodes:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the run never reached {nodes}")


def three_step_graph(seeder: Seeder, gates: list[asyncio.Event]) -> Any:
    return node_graph(
        seeder.saver,
        [
            ("start", lambda s: {"messages": [AIMessage("working")]}),
            ("one", gated(gates[0], "step one")),
            ("two", gated(gates[1], "step two")),
            ("three", gated(gates[2], "the final answer")),
        ],
    )


@dataclass
class GatedRun:
    """A run of ``three_step_graph``: its thread, its gates and the task running it."""

    thread: SeededThread
    gates: list[asyncio.Event]
    task: asyncio.Task[Any]

    async def finish(self) -> None:
        """Open every gate and wait for the run to end."""
        for gate in self.gates:
            gate.set()
        await self.task


@asynccontextmanager
async def three_step_run(seeder: Seeder) -> AsyncIterator[GatedRun]:
    """A run of ``three_step_graph`` held at its first gate; on leaving (a failure
    too) every gate opens and the run is waited for."""
    gates = [asyncio.Event() for _ in range(3)]
    thread = seeder.thread(three_step_graph(seeder, gates))
    run = GatedRun(
        thread, gates, asyncio.create_task(seeder.run(thread, {"messages": [HumanMessage("go")]}))
    )
    try:
        await reached(thread, ("one",))
        yield run
    finally:
        await run.finish()


def parked_waiters(service: FinalAnswerService) -> int:
    """Requests parked on the service's polls (``delivery``)."""
    return sum(len(poll.parking) for poll in service.long_polls._polls.values())


async def heads_for_waiters(seeder: Seeder, waiters: int) -> tuple[int, list[dict[str, Any]]]:
    """Head queries the reader runs while ``waiters`` long-polls follow one run from its
    first gate to its end (three commits), and what the waiters got."""
    reader = seeder.store.reader()
    heads = count_calls(reader, "head")
    service = FinalAnswerService(reader, None)
    try:
        async with three_step_run(seeder) as run, serving(create_app(lambda: service)) as client:

            async def hold() -> dict[str, Any]:
                response = await client.get(route(run.thread.thread_id), params={"wait": 20})
                return response.json()

            held = [asyncio.create_task(hold()) for _ in range(waiters)]
            await asyncio.sleep(0.3)
            for gate in run.gates:
                gate.set()
                await asyncio.sleep(0.3)
            await run.task
            bodies = await asyncio.wait_for(asyncio.gather(*held), 10)
    finally:
        await service.close()
    return heads[0], bodies


async def test_many_waiters_share_one_head_check_per_change(seeder: Seeder) -> None:
    alone, (body,) = await heads_for_waiters(seeder, 1)
    shared, bodies = await heads_for_waiters(seeder, MANY)
    assert body["content"] == "the final answer" and body["complete"] is True
    assert {b["content"] for b in bodies} == {"the final answer"}
    # Each waiter reading for itself ran at least one head query per waiter per change.
    assert shared <= alone + 3, (alone, shared)
    assert shared < MANY


async def test_waiters_on_many_threads_share_one_watch_query(seeder: Seeder, backend: str) -> None:
    """Waiters on ten threads: after a commit to one of them, the watch checks all ten
    in one query, and only that thread's poll reads its answer again."""
    reader = seeder.store.reader()
    heads = count_calls(reader, "head")
    service = FinalAnswerService(reader, None)
    threads = [await seeder.paused_before() for _ in range(10)]
    try:
        async with three_step_run(seeder) as run, serving(create_app(lambda: service)) as client:
            moving, gates = run.thread, run.gates
            held = [
                asyncio.create_task(client.get(route(t.thread_id), params={"wait": 5}))
                for t in threads
                for _ in range(3)
            ]
            mover = asyncio.create_task(client.get(route(moving.thread_id), params={"wait": 20}))
            # Every request parked, and each thread read twice: once, then once more
            # as its token predates that first sighting (``ThreadWatch``).
            await until(lambda: parked_waiters(service) == len(held) + 1)
            await until(lambda: heads[0] >= 2 * (len(threads) + 1))
            assert service.long_polls.active == len(threads) + 1
            checks, before = reader.watch.checks, heads[0]
            gates[0].set()
            await reached(moving, ("two",))
            await until(lambda: reader.watch.checks > checks)
            await asyncio.sleep(0.3)  # the window in which no more checks may run
            # Each check is one query for all eleven threads: SQLite's run on the
            # commit's reports (a few), PostgreSQL's every 50 ms whatever the count.
            # The paused threads' polls read nothing.
            if backend == "sqlite":
                assert 1 <= reader.watch.checks - checks <= 6
            assert heads[0] - before <= 3
            await run.finish()
            assert (await asyncio.wait_for(mover, 10)).json()["complete"] is True
            for response in await asyncio.gather(*held):
                assert response.json()["status"] == "running"
    finally:
        await service.close()


def serving_tasks() -> int:
    """Tasks serving requests: uvicorn's per-request ones and the route's own (polls,
    watches); the seeding run's and the PostgreSQL pool's are not counted, nor the
    route's task that closes its service when the loop ends (``loop_services``)."""
    count = 0
    for task in asyncio.all_tasks():
        code = getattr(task.get_coro(), "cr_code", None)
        name = code.co_filename if code is not None else ""
        if code is not None and code.co_name == "_close_when_ended":
            continue
        count += "evoscientist_final_answer" in name or (
            "uvicorn" in name and code.co_name == "run_asgi"
        )
    return count


async def test_a_disconnect_mid_wait_stops_the_reads(seeder: Seeder) -> None:
    reader = seeder.store.reader()
    heads = count_calls(reader, "head")
    service = FinalAnswerService(reader, None)
    try:
        async with three_step_run(seeder) as run, listening(create_app(lambda: service)) as port:
            thread, gates = run.thread, run.gates
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            request = f"GET {route(thread.thread_id)}?wait=30 HTTP/1.1\r\nHost: t\r\n\r\n"
            writer.write(request.encode())
            await writer.drain()
            await until(lambda: heads[0] >= 1)
            assert serving_tasks() >= 2  # the request, its poll (the counter sees them)
            gates[0].set()  # a commit while held: the poll reads again
            await reached(thread, ("two",))
            await until(lambda: heads[0] >= 2)

            writer.close()
            # The held request, its poll and its watch are gone within a second.
            await until(lambda: serving_tasks() == 0, 1.0)
            after_close = heads[0]
            await run.finish()  # two more commits, the last one final
            await asyncio.sleep(0.5)
            assert heads[0] == after_close
    finally:
        await service.close()


async def test_a_waiter_that_leaves_does_not_end_the_others(seeder: Seeder) -> None:
    reader = seeder.store.reader()
    service = FinalAnswerService(reader, None)
    try:
        async with three_step_run(seeder) as run:

            def hold() -> Awaitable[Any]:
                return service.wait(run.thread.thread_id, None, 20)

            leaving, staying = asyncio.create_task(hold()), asyncio.create_task(hold())
            await asyncio.sleep(0.2)
            leaving.cancel()
            await run.finish()
            answer = await asyncio.wait_for(staying, 5)
            assert answer.complete and answer.content == "the final answer"
            assert leaving.cancelled()
            assert service.long_polls.active == 0
    finally:
        await service.close()
