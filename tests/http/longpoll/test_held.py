"""The cap on held long-polls (``http/longpoll/held.py``): in-process with a cap of two,
and in a real ``langgraph dev`` with a low open-file limit, more polls than the server
has descriptors for do not starve it (``/ok``, run creation and the route keep answering).
"""

from __future__ import annotations

import asyncio
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer import settings
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.http.longpoll.test_waiting import three_step_run, until
from tests.support.bounds import HELD_WAIT_S, NOT_HELD_S
from tests.support.seeds import Seeder, route, serving
from tests.support.servers import langgraph_dev

CAP_VARIABLE = "EVOSCIENTIST_MAX_HELD_REQUESTS"


def held_count(service: FinalAnswerService) -> int:
    return sum(poll.waiters for poll in service.long_polls._polls.values())


async def test_past_the_cap_a_long_poll_is_answered_at_once(
    seeder: Seeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAP_VARIABLE, "2")
    service = FinalAnswerService(seeder.store.reader(), None)
    try:
        async with three_step_run(seeder) as run, serving(create_app(lambda: service)) as client:
            path = route(run.thread.thread_id)
            held = [asyncio.create_task(client.get(path, params={"wait": 20})) for _ in range(2)]
            await until(lambda: held_count(service) == 2)
            started = time.monotonic()
            extra = await client.get(path, params={"wait": HELD_WAIT_S})
            assert time.monotonic() - started < NOT_HELD_S  # the run does not end
            assert extra.status_code == 200 and extra.json()["status"] == "running"

            held[0].cancel()  # one held request gone: the next one is held again
            await until(lambda: held_count(service) == 1)
            again = asyncio.create_task(client.get(path, params={"wait": 20}))
            await until(lambda: held_count(service) == 2)
            await run.finish()
            for response in await asyncio.gather(held[1], again):
                assert response.json()["content"] == "the final answer"
    finally:
        await service.close()


def test_the_cap_defaults_to_half_the_open_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CAP_VARIABLE, raising=False)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert settings.max_held_requests() == soft // 2
    monkeypatch.setenv(CAP_VARIABLE, "0")
    assert settings.max_held_requests() == 0  # nothing held: every wait= answered at once
    for bad in ("lots", "1.5", "-1"):
        monkeypatch.setenv(CAP_VARIABLE, bad)
        with pytest.raises(ValueError, match=CAP_VARIABLE):
            settings.max_held_requests()


# The server's open-file limit in the fd test, and the polls held against it: more
# than the server has descriptors for (it uses about 25 of its own at rest).
SERVER_FD_LIMIT = 128
POLLS = 160


@contextmanager
def open_file_limit(soft: int) -> Iterator[None]:
    """This process's soft limit lowered while a child inherits it."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


async def hold(port: int, path: str) -> asyncio.StreamWriter:
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    return writer


@pytest.mark.e2e
async def test_near_the_fd_limit_held_polls_leave_the_server_serving(tmp_path: Path) -> None:
    """A ``langgraph dev`` whose open-file limit is 128 (so, by default, at most 64
    held polls) and 160 polls on a thread with no run yet: the server still answers ``/ok``, runs a
    new turn and answers it. Before the cap the polls took every descriptor: new
    connections were dropped unanswered and the run's writes failed."""
    question = "What does a held poll cost?"
    with open_file_limit(SERVER_FD_LIMIT):
        server_context = langgraph_dev(tmp_path / "work", tmp_path / "data")
        server = server_context.__enter__()
    try:
        sdk = get_client(url=server.url, api_key=None, timeout=30)
        held: list[asyncio.StreamWriter] = []
        try:
            waiting = (await sdk.threads.create())["thread_id"]  # no run yet: pending
            for _ in range(POLLS):
                held.append(await hold(server.port, f"{route(waiting)}?wait=60"))
            await asyncio.sleep(1.0)
            async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
                assert (await http.get("/ok")).status_code == 200
                thread_id = (await sdk.threads.create())["thread_id"]
                await sdk.runs.wait(
                    thread_id,
                    "EvoScientist",
                    input={"messages": [{"role": "user", "content": question}]},
                )
                body = (await http.get(route(thread_id))).json()
            assert body["complete"] is True
            assert body["content"] == answer_for(question, [notes_for(question)])
        finally:
            for writer in held:
                writer.close()
            await sdk.aclose()
    finally:
        server_context.__exit__(None, None, None)
