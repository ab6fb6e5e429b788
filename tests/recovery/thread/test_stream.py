"""``with_recovery(client).threads.stream``: the SDK's v2 thread stream, following its
run to the end, against a real ``langgraph dev`` (the demo agent) through a real proxy.

The SDK's stream, without it, is each test's control where one fails: after its quick
re-opens give up it ends short of the answer, and a second run on a thread shows the
first run's events and ends at that run's end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.recovery.thread import with_recovery
from tests.recovery.thread.events import shown_text
from tests.support.local_http import local_client
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
CHANNELS = ["messages", "tools", "values", "lifecycle", "input"]
# Longer than the SDK's own re-opens (five in about two seconds) and than the answer's
# rest: the run ends during it.
OUTAGE_S = 6.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("thread-stream")
    with langgraph_dev(
        root / "work", root / "data", env={"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.05"}
    ) as started:
        yield started


def expected(question: str) -> str:
    return answer_for(question, [notes_for(question)])


async def one_run(
    url: str,
    thread_id: str,
    question: str,
    *,
    recovering: bool = True,
    outage_at: int | None = None,
    proxy: FaultProxy | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``run.start`` then ``subscribe`` on a thread stream, as upstream's gateway does;
    ``outage_at``: the proxy takes the network away once that much text shows."""
    client = get_client(url=url, api_key=None)
    threads = with_recovery(client).threads if recovering else client.threads
    events: list[dict[str, Any]] = []
    try:
        async with threads.stream(thread_id, assistant_id=ASSISTANT) as stream:
            started = await stream.run.start(
                input={"messages": [{"role": "user", "content": question}]}
            )
            async for event in stream.subscribe(CHANNELS):
                events.append(event)
                if (
                    outage_at is not None
                    and proxy is not None
                    and len(shown_text(events)) >= outage_at
                ):
                    proxy.outage(OUTAGE_S)
                    outage_at = None
    finally:
        await client.aclose()
    return started, events


async def route(server: DevServer, thread_id: str) -> dict[str, Any]:
    async with local_client(server.url, timeout=60) as http:
        response = await http.get(f"/api/threads/{thread_id}/final-answer", params={"wait": "30"})
        return response.json()


def ends(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["params"]["data"]["event"]
        for e in events
        if e["method"] == "lifecycle"
        and not e["params"]["namespace"]
        and e["params"]["data"]["event"] in ("completed", "failed", "interrupted")
    ]


async def new_thread(url: str) -> str:
    client = get_client(url=url, api_key=None)
    try:
        return (await client.threads.create())["thread_id"]
    finally:
        await client.aclose()


async def test_a_run_cut_by_an_outage_ends_with_its_whole_answer(server: DevServer) -> None:
    question = "What does a 6 s outage cost?"
    async with FaultProxy(server.port, Fault()) as proxy:
        thread_id = await new_thread(server.url)
        started, events = await one_run(proxy.url, thread_id, question, outage_at=40, proxy=proxy)
        assert proxy.stats.refused > 0, "the outage refused no re-open"
    body = await route(server, thread_id)
    assert body["status"] == "success" and body["run_id"] == started["run_id"]
    assert shown_text(events) == body["content"] == expected(question)
    assert ends(events) == ["completed"]
    ids = [e["event_id"] for e in events]
    assert len(ids) == len(set(ids)), "an event was delivered twice"


async def test_without_it_the_sdk_stream_ends_short(server: DevServer) -> None:
    """The control: the SDK's own stream through the same outage."""
    question = "What does a 6 s outage cost the bare stream?"
    async with FaultProxy(server.port, Fault()) as proxy:
        thread_id = await new_thread(server.url)
        _, events = await one_run(
            proxy.url, thread_id, question, recovering=False, outage_at=40, proxy=proxy
        )
    body = await route(server, thread_id)
    assert len(shown_text(events)) < len(body["content"]) and ends(events) == []


async def test_a_second_run_on_the_thread_shows_its_own_events_alone(server: DevServer) -> None:
    thread_id = await new_thread(server.url)
    first, second = "The first question?", "The second question?"
    await one_run(server.url, thread_id, first)
    _, events = await one_run(server.url, thread_id, second)
    assert shown_text(events) == expected(second)
    assert ends(events) == ["completed"]
    # The control: the SDK's stream replays the thread's first run and ends at its end.
    _, bare = await one_run(server.url, thread_id, "The third question?", recovering=False)
    assert shown_text(bare) == expected(first)
    body = await route(server, thread_id)
    assert body["content"] == expected("The third question?")


async def test_a_start_whose_response_was_lost_joins_its_run(server: DevServer) -> None:
    question = "Was the start lost?"
    async with FaultProxy(server.port, Fault("lose-response", match=("/commands",))) as proxy:
        thread_id = await new_thread(server.url)
        started, events = await one_run(proxy.url, thread_id, question)
        assert proxy.stats.fired == 1
    client = get_client(url=server.url, api_key=None)
    try:
        runs = await client.runs.list(thread_id)
    finally:
        await client.aclose()
    assert [run["run_id"] for run in runs] == [started["run_id"]]
    assert shown_text(events) == expected(question)
    assert ends(events) == ["completed"]


async def test_a_run_cancelled_while_the_stream_was_away_ends_cancelled(server: DevServer) -> None:
    """Cancelled by someone else during an outage: the stream ends as the server ends a
    cancelled run (root lifecycle ``interrupted``), never starting anything again."""
    question = "Cancel me while the stream is away?"
    async with FaultProxy(server.port, Fault()) as proxy:
        thread_id = await new_thread(server.url)
        client = get_client(url=server.url, api_key=None)

        async def cancel_during_the_outage() -> None:
            while not proxy.stats.refused:
                await asyncio.sleep(0.05)
            run_id = (await client.runs.list(thread_id))[0]["run_id"]
            await client.runs.cancel(thread_id, run_id, wait=True, action="interrupt")

        try:
            canceller = asyncio.create_task(cancel_during_the_outage())
            _, events = await one_run(proxy.url, thread_id, question, outage_at=20, proxy=proxy)
            await canceller
            runs = await client.runs.list(thread_id)
        finally:
            await client.aclose()
    assert ends(events) == ["interrupted"]
    assert [run["status"] for run in runs] == ["interrupted"]
    assert expected(question).startswith(shown_text(events))
