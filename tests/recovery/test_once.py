"""Exactly-once submits (``evoscientist_final_answer.recovery.once``) against a real
``langgraph dev``: a proxy cuts the submit before its response at several timings — the
request never reaches the
server, reaches it and makes its run at once, or reaches it only after the client has
started looking for the run — on an idle thread and on one busy with another run. Each
time the client ends with the run's answer, and the thread holds one run per request id.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.recovery import stream_with_recovery
from evoscientist_final_answer.recovery.once import (
    LOOKUP_WINDOW_SECONDS,
    REQUEST_ID_KEY,
    submit_of,
    tagged_run,
)
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer, langgraph_dev, new_thread

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
# Slow enough that a run started first still holds the thread after the lookup window.
TOKEN_DELAY = "0.04"
SUBMITS = ("/runs/stream",)

# name: (fault, what the client did about it)
TIMINGS: dict[str, tuple[Fault, str]] = {
    "the request never reaches the server": (Fault("drop", match=SUBMITS), "posted again"),
    "the run is made, then the response is cut": (Fault("cut", 0, match=SUBMITS), "joined"),
    "the run is made after the first lookup": (
        Fault("late", match=SUBMITS, delay=LOOKUP_WINDOW_SECONDS / 4),
        "joined",
    ),
    "the run is made late in the lookup window": (
        Fault("late", match=SUBMITS, delay=LOOKUP_WINDOW_SECONDS * 0.8),
        "joined",
    ),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("once")
    with langgraph_dev(
        root / "work", root / "data", env={"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": TOKEN_DELAY}
    ) as dev:
        yield dev


def ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


async def runs_of(url: str, thread_id: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        response = await http.get(f"/threads/{thread_id}/runs", params={"limit": 100})
        response.raise_for_status()
        return response.json()


def per_request(runs: list[dict[str, Any]]) -> Counter[str | None]:
    return Counter((run.get("metadata") or {}).get(REQUEST_ID_KEY) for run in runs)


async def ask_through(proxy: FaultProxy, thread_id: str, question: str) -> dict[str, Any]:
    return await stream_with_recovery(
        proxy.url, thread_id, ASSISTANT, ask(question), stall_timeout=5.0, max_wait=60
    )


@pytest.mark.parametrize("name", list(TIMINGS))
async def test_a_submit_cut_before_its_response_makes_one_run(server: DevServer, name: str) -> None:
    fault, action = TIMINGS[name]
    question = f"Once: {name}?"
    thread_id = await new_thread(server.url)
    async with FaultProxy(server.port, fault) as proxy:
        result = await ask_through(proxy, thread_id, question)
        assert proxy.stats.fired == 1, "the fault never fired"
        # A late request has reached the server by now: whatever it made is listed.
        await asyncio.sleep(fault.delay)
    runs = await runs_of(server.url, thread_id)
    assert len(runs) == 1, runs
    assert per_request(runs).most_common(1)[0][1] == 1
    assert result["run_id"] == runs[0]["run_id"]
    assert (result["resubmitted"] or "").startswith(action), result
    assert result["complete"] is True and result["status"] == "success"
    assert result["content"] == answer_for(question, [notes_for(question)])
    if action == "joined":
        # The join replayed the run from its first event: the stream showed it all.
        assert result["recovered"] is False, result


@pytest.mark.parametrize(
    "name", ["the request never reaches the server", "the run is made after the first lookup"]
)
async def test_on_a_busy_thread_the_submit_still_makes_one_run(
    server: DevServer, name: str
) -> None:
    """Another run holds the thread, so the client's second post is refused (409) whether
    or not its first made a run: it looks again, and queues only if none is there."""
    fault, action = TIMINGS[name]
    thread_id = await new_thread(server.url)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        other = await http.post(
            f"/threads/{thread_id}/runs",
            json={"assistant_id": ASSISTANT, "input": ask("Once: the run that holds the thread?")},
        )
        other.raise_for_status()
    question = f"Once, busy: {name}?"
    async with FaultProxy(server.port, fault) as proxy:
        result = await ask_through(proxy, thread_id, question)
        await asyncio.sleep(fault.delay)
    runs = await runs_of(server.url, thread_id)
    assert len(runs) == 2, runs
    assert set(per_request(runs).values()) == {1}, runs
    assert (result["resubmitted"] or "").startswith(action), result
    assert result["status"] == "success"
    assert result["content"] == answer_for(question, [notes_for(question)])


async def test_a_submit_without_a_fault_is_sent_once_and_not_looked_up(server: DevServer) -> None:
    thread_id = await new_thread(server.url)
    async with FaultProxy(server.port, Fault()) as proxy:
        result = await ask_through(proxy, thread_id, "Once: no fault?")
        # The submit, then the route; no lookup of the thread's runs.
        assert proxy.stats.connections <= 3, vars(proxy.stats)
    assert result["resubmitted"] is None
    assert len(await runs_of(server.url, thread_id)) == 1


def _post(path: str, body: object) -> httpx.Request:
    return httpx.Request("POST", f"http://x{path}", json=body)


def test_a_submit_is_told_apart_by_its_path_and_request_id() -> None:
    body = {"assistant_id": "A", "metadata": {REQUEST_ID_KEY: "r1"}, "stream_resumable": True}
    submit = submit_of(_post("/api/threads/t/runs/stream", body))
    assert submit is not None
    assert (submit.request_id, str(submit.thread_url)) == ("r1", "http://x/api/threads/t")
    assert submit.resumable is True and submit.strategy is None
    assert submit_of(_post("/threads/t/runs/stream", {"metadata": {}})) is None
    assert submit_of(_post("/threads/t/runs", body)) is None
    assert submit_of(httpx.Request("GET", "http://x/threads/t/runs/stream")) is None
    assert submit_of(httpx.Request("POST", "http://x/threads/t/runs/stream", content=b"{")) is None
    # The server lists newest first: the oldest tagged run is the first POST's.
    runs = [
        {"run_id": "r3", "metadata": {REQUEST_ID_KEY: "other"}},
        {"run_id": "r2", "metadata": {REQUEST_ID_KEY: "r1"}},
        {"run_id": "r1", "metadata": {REQUEST_ID_KEY: "r1"}},
    ]
    assert tagged_run(runs, "r1") == "r1"
    assert tagged_run({"detail": "not a list"}, "r1") is None
