"""The routes' per-loop service (``http/loop_services.py``): closed by ``close`` even
when its closer has not yet run a step (a task cancelled before its first step never
runs its body)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from evoscientist_final_answer.http.loop_services import LoopServices
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.support.seeds import Seeder

pytestmark = pytest.mark.backends("sqlite")


def worker_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if "_connection_worker_thread" in t.name]


async def test_close_right_after_the_service_is_made_closes_it(seeder: Seeder) -> None:
    thread = await seeder.chat(["the answer"])
    before = set(worker_threads())
    service = FinalAnswerService(seeder.store.reader(), None)
    assert (await service.read(thread.thread_id)).content == "the answer"  # opened
    opened = set(worker_threads()) - before
    assert opened, "the read opened no connection of its own"
    services = LoopServices(lambda: service)
    assert await services.get() is service
    await services.close()  # no step of the loop between the two
    for _ in range(100):
        if not opened & set(worker_threads()):
            break
        await asyncio.sleep(0.05)
    assert not opened & set(worker_threads()), "the service was left open"
