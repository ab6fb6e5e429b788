"""A turn queued behind another run, inside a real ``langgraph dev``: it reads
``pending`` with empty content and its own ``run_id``, never the previous turn's answer.

The server runs one job at a time (``--n-jobs-per-worker 1``) and a slow run on another
thread holds that job, so the new turn stays queued for seconds, not for the instant
between one run ending and the next starting.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from tests.support.servers import DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
SLOW_TOOL = "SlowTool"
ENV = {"EVOSCIENTIST_TEST_TOOL_SECONDS": "8", "EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("queued-turn")
    with langgraph_dev(
        root / "work",
        root / "data",
        extra_graphs={SLOW_TOOL: "tests/support/slow_tool_graph.py:graph"},
        env=ENV,
        args=("--n-jobs-per-worker", "1"),
    ) as server:
        yield server


def ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


async def run_status(client: Any, thread_id: str, run_id: str) -> str:
    return (await client.runs.get(thread_id, run_id))["status"]


async def until_status(client: Any, thread_id: str, run_id: str, status: str) -> None:
    deadline = time.monotonic() + 30
    while await run_status(client, thread_id, run_id) != status:
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} never became {status}")
        await asyncio.sleep(0.05)


async def test_a_queued_turn_is_pending_with_its_own_run_id(server: DevServer) -> None:
    client = get_client(url=server.url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        first_question = "The first turn?"
        first = await client.runs.create(thread_id, ASSISTANT, input=ask(first_question))
        await client.runs.join(thread_id, first["run_id"])
        first_answer = answer_for(first_question, [notes_for(first_question)])

        other = (await client.threads.create())["thread_id"]
        blocker = await client.runs.create(other, SLOW_TOOL, input=ask("hold the only job"))
        await until_status(client, other, blocker["run_id"], "running")
        second_question = "The queued turn?"
        queued = await client.runs.create(
            thread_id, ASSISTANT, input=ask(second_question), multitask_strategy="enqueue"
        )

        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            path = f"/api/threads/{thread_id}/final-answer"
            thread_level = (await http.get(path)).json()
            by_run = (await http.get(path, params={"run_id": queued["run_id"]})).json()
            text = await http.get(path, params={"format": "text"})
            earlier = (await http.get(path, params={"run_id": first["run_id"]})).json()
            assert await run_status(client, thread_id, queued["run_id"]) == "pending"

            for body in (thread_level, by_run):
                assert (body["status"], body["complete"], body["content"]) == (
                    "pending",
                    False,
                    "",
                ), body
                assert body["run_id"] == queued["run_id"]
                assert body["checkpoint_id"] is None
            assert (text.text, text.headers["x-answer-status"]) == ("", "pending")
            assert text.headers["x-answer-run-id"] == queued["run_id"]
            # The previous turn is still there, asked for by its own run id.
            assert (earlier["status"], earlier["content"]) == ("success", first_answer), earlier
            assert earlier["run_id"] == first["run_id"]

            done = (await http.get(path, params={"run_id": queued["run_id"], "wait": "30"})).json()
            second_answer = answer_for(second_question, [notes_for(second_question)])
            assert (done["status"], done["content"]) == ("success", second_answer), done
            latest = (await http.get(path)).json()
            assert (latest["run_id"], latest["content"]) == (queued["run_id"], second_answer)
    finally:
        await client.aclose()
