"""F2/F3/F2a against real servers: one with the route, one without it (an older server)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.answer.state import answer_from_state
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.recovery import stream_with_recovery
from evoscientist_final_answer.recovery.reconcile import Reconciler, ThreadGone, backoff
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.http.longpoll.test_waiting import three_step_run
from tests.support.proxy import Fault, FaultProxy
from tests.support.seeds import Seeder, serving
from tests.support.servers import DevServer, langgraph_dev


def test_backoff_is_1_2_4_then_every_5_seconds() -> None:
    assert [backoff(i) for i in range(6)] == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]


@pytest.fixture(scope="module")
def old_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("no-route")
    with langgraph_dev(
        root / "work",
        root / "data",
        http=False,
        env={"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"},
    ) as dev:
        yield dev


@pytest.mark.e2e
async def test_old_server_without_the_route_falls_back_to_state(old_server: DevServer) -> None:
    async with httpx.AsyncClient(base_url=old_server.url) as http:
        absent = await http.get("/api/threads/00000000-0000-0000-0000-000000000000/final-answer")
    assert absent.status_code == 404 and "thread_not_found" not in absent.text

    question = "Old server: what is a negative control?"
    sdk = get_client(url=old_server.url, api_key=None)
    thread_id = (await sdk.threads.create())["thread_id"]
    async with FaultProxy(old_server.port, Fault(kind="cut", after_bytes=2_000)) as proxy:
        result = await stream_with_recovery(
            proxy.url,
            thread_id,
            "EvoScientist",
            {"messages": [{"role": "user", "content": question}]},
            max_wait=60,
        )
        assert proxy.stats.fired == 1
    state = await sdk.threads.get_state(thread_id)
    await sdk.aclose()

    assert result["source"] == "api"
    assert result["complete"] is True
    assert result["content"] == answer_from_state(thread_id, state).content
    assert result["content"] == answer_for(question, [notes_for(question)])


@pytest.mark.e2e
async def test_unknown_thread_is_gone_not_retried(old_server: DevServer) -> None:
    async with httpx.AsyncClient(base_url=old_server.url) as http:
        with pytest.raises(ThreadGone):
            await Reconciler(http, "00000000-0000-0000-0000-000000000000", None).settle(30)


async def test_network_errors_are_retried_until_the_deadline() -> None:
    # Nothing listens on this port: every attempt fails to connect ("Failed to fetch").
    from tests.support.servers import free_port

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{free_port()}") as http:
        reconciler = Reconciler(http, "t", "r")
        with pytest.raises(Exception, match="no answer within"):
            await reconciler.settle(1.5)


async def test_a_rejected_request_is_not_retried(tmp_path: Path) -> None:
    """A 422 (here: a run id the route refuses) will never pass: raise, don't poll."""
    app = create_app(
        lambda: FinalAnswerService(SqliteAnswerReader(tmp_path / "none.db", "EvoScientist"), None)
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        reconciler = Reconciler(http, "abcd1234", "r" * 300)
        started = time.monotonic()
        with pytest.raises(httpx.HTTPStatusError) as raised:
            await reconciler.settle(30)
    assert raised.value.response.status_code == 422
    assert time.monotonic() - started < 5


async def test_the_long_poll_follows_the_first_read_at_once(seeder: Seeder) -> None:
    """The first read (no ``wait``: the route may not be there) finds the run going; the
    next one is a long-poll sent at once, not after the 1 s backoff, so a run ending in
    that second is read as it ends. The run ends when that long-poll is on its way."""
    service = FinalAnswerService(seeder.store.reader(), None)
    sent: list[tuple[float, httpx.URL]] = []
    async with three_step_run(seeder) as run, serving(create_app(lambda: service)) as http:

        async def record(request: httpx.Request) -> None:
            sent.append((time.monotonic(), request.url))
            if len(sent) == 2:
                for gate in run.gates:
                    gate.set()

        http.event_hooks["request"] = [record]
        answer = await Reconciler(http, run.thread.thread_id, None).settle(60)
    assert answer["complete"] is True and answer["content"] == "the final answer"
    assert [url.params.get("wait") for _, url in sent] == [None, "30"]
    # What separates them is the first response only (milliseconds), not a backoff.
    assert sent[1][0] - sent[0][0] < backoff(0) / 2


class _RestartingRoute:
    """A route on a real port that answers "running" once, then refuses connections (its
    server is down) until ``back()``, then answers the run complete."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.server: asyncio.Server | None = None
        self.complete = False

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        body = json.dumps({"content": "done" if self.complete else "", "complete": self.complete})
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n{body}".encode()
        )
        await writer.drain()
        writer.close()
        if not self.complete:
            await self.down()

    async def up(self) -> None:
        self.server = await asyncio.start_server(self._answer, "127.0.0.1", self.port)

    async def down(self) -> None:
        assert self.server is not None
        self.server.close()

    async def back(self) -> None:
        self.complete = True
        await self.up()


async def test_a_restarting_server_is_asked_again_soon_not_after_a_growing_backoff() -> None:
    """The route long-polled, then its server went down (connections refused): the run's
    end, once the server is back, is read at the next reconnect, not in a 1-2-4 s backoff's
    next step (3 s after the first refusal, then 7 s)."""
    from tests.support.servers import free_port

    route = _RestartingRoute(free_port())
    await route.up()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{route.port}") as http:
        settling = asyncio.create_task(Reconciler(http, "t", "r").settle(30))
        await asyncio.sleep(3.3)  # past the backoff's second step, before its third
        await route.back()
        back = time.monotonic()
        answer = await settling
    assert answer["complete"] is True and answer["content"] == "done"
    # Reconnects come every 0.5 s; the backoff's next step would be 3.7 s after ``back``
    # (7 s after the first refusal). 3 s tells the two apart with room for a loaded machine.
    assert time.monotonic() - back < 3.0
