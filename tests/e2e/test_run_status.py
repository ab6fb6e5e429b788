"""Run status against a real ``langgraph dev``: what the server knows of its runs.

The server runs with a 1 s silence bound (``EVOSCIENTIST_RUN_SILENCE_SECONDS``), far
shorter than the 4 s its slow tool stays silent: a run it executes is still never
called lost. An API cancel (``interrupt``) reads as ``run_cancelled``; a ``rollback``
deletes the run and its checkpoints, so the thread reads as it was before it; a
``run_id`` the server does not know is a 404 ``run_not_found`` at once, even under
``wait=``; a run queued behind another, with nothing written yet, is ``pending``.
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
from evoscientist_final_answer.recovery.reconcile import Reconciler, RunGone
from tests.support.local_http import local_client
from tests.support.reliability import assert_error
from tests.support.servers import DevServer, langgraph_dev
from tests.support.slow_tool_graph import SLOW_ANSWER

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
SLOW_TOOL = "SlowTool"
TOOL_SECONDS = 4.0
ENV = {
    "EVOSCIENTIST_RUN_SILENCE_SECONDS": "1",
    "EVOSCIENTIST_TEST_TOOL_SECONDS": str(TOOL_SECONDS),
    "EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.05",
}
UNKNOWN_RUN = "00000000-0000-4000-8000-000000000000"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("run-status")
    with langgraph_dev(
        root / "work",
        root / "data",
        extra_graphs={SLOW_TOOL: "tests/support/slow_tool_graph.py:graph"},
        env=ENV,
    ) as server:
        yield server


def ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


async def final_answer(server: DevServer, thread_id: str, **params: Any) -> httpx.Response:
    async with local_client(server.url, timeout=90) as http:
        return await http.get(f"/api/threads/{thread_id}/final-answer", params=params)


async def start_run(server: DevServer, graph: str, question: str, **kwargs: Any) -> dict[str, Any]:
    client = get_client(url=server.url, api_key=None)
    try:
        thread_id = kwargs.pop("thread_id", None) or (await client.threads.create())["thread_id"]
        run = await client.runs.create(thread_id, graph, input=ask(question), **kwargs)
        return {"thread_id": thread_id, "run_id": run["run_id"]}
    finally:
        await client.aclose()


async def under_way(server: DevServer, thread_id: str, messages: int = 3) -> None:
    """Until the thread's newest checkpoint holds ``messages`` messages."""
    client = get_client(url=server.url, api_key=None)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = await client.threads.get_state(thread_id)
            if len((state.get("values") or {}).get("messages", [])) >= messages:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the run never got under way")
    finally:
        await client.aclose()


async def test_a_slow_tool_call_is_never_reported_lost(server: DevServer) -> None:
    run = await start_run(server, SLOW_TOOL, "take your time")
    seen: list[tuple[float, str]] = []
    started = time.monotonic()
    while time.monotonic() - started < TOOL_SECONDS + 30:
        body = (await final_answer(server, run["thread_id"], run_id=run["run_id"])).json()
        seen.append((time.monotonic() - started, body["status"]))
        if body["complete"]:
            break
        await asyncio.sleep(0.2)
    assert body["status"] == "success" and body["content"] == SLOW_ANSWER, body
    unfinished = [at for at, status in seen if status in ("pending", "running")]
    assert {status for _, status in seen} <= {"pending", "running", "success"}, seen
    # Asked again and again while the thread was silent far past the 1 s bound.
    assert unfinished and max(unfinished) - min(unfinished) > 2.0, seen


async def test_an_api_cancel_is_a_cancelled_run(server: DevServer) -> None:
    question = "Cancel this one (interrupt)?"
    run = await start_run(server, ASSISTANT, question)
    await under_way(server, run["thread_id"])
    client = get_client(url=server.url, api_key=None)
    try:
        await client.runs.cancel(run["thread_id"], run["run_id"], wait=True, action="interrupt")
    finally:
        await client.aclose()
    full = answer_for(question, [notes_for(question)])
    bodies = [
        (await final_answer(server, run["thread_id"], **params)).json()
        for params in ({"run_id": run["run_id"]}, {"run_id": run["run_id"], "wait": "5"}, {})
    ]
    for body in bodies:
        assert (body["status"], body["complete"]) == ("error", True), body
        assert body["error"]["code"] == "run_cancelled", body
        assert body["error"]["retryable"] is False
        assert body["content"] != full and full.startswith(body["content"]), body
    assert len({b["content"] for b in bodies}) == 1  # the same answer every time


async def test_a_rolled_back_run_is_gone_and_the_thread_reads_as_before(
    server: DevServer,
) -> None:
    """``action=rollback`` deletes the run and, through the checkpointer's
    ``adelete_for_runs``, its checkpoints: the previous turn is the answer again."""
    first_question = "Keep this turn?"
    first = await start_run(server, ASSISTANT, first_question)
    client = get_client(url=server.url, api_key=None)
    try:
        await client.runs.join(first["thread_id"], first["run_id"])
        second = await start_run(
            server, ASSISTANT, "Roll this one back?", thread_id=first["thread_id"]
        )
        await under_way(server, first["thread_id"], messages=7)  # 4 of turn 1, 3 of turn 2
        await client.runs.cancel(first["thread_id"], second["run_id"], wait=True, action="rollback")
    finally:
        await client.aclose()

    for params in ({"run_id": second["run_id"]}, {"run_id": second["run_id"], "wait": "5"}):
        started = time.monotonic()
        response = await final_answer(server, first["thread_id"], **params)
        assert_error(response, 404, "run_not_found", retryable=False)
        assert time.monotonic() - started < 5
    body = (await final_answer(server, first["thread_id"])).json()
    assert (body["status"], body["complete"]) == ("success", True), body
    assert body["run_id"] == first["run_id"]
    assert body["content"] == answer_for(first_question, [notes_for(first_question)])


async def test_a_run_id_the_server_does_not_know_is_404_at_once(server: DevServer) -> None:
    run = await start_run(server, SLOW_TOOL, "quick lookup")
    client = get_client(url=server.url, api_key=None)
    try:
        await client.runs.join(run["thread_id"], run["run_id"])
        bare = (await client.threads.create())["thread_id"]  # known, never run
    finally:
        await client.aclose()
    for thread_id in (run["thread_id"], bare):
        started = time.monotonic()
        response = await final_answer(server, thread_id, run_id=UNKNOWN_RUN, wait="30")
        assert_error(response, 404, "run_not_found", retryable=False)
        assert time.monotonic() - started < 5, "a wait= held for a run that does not exist"
    assert (await final_answer(server, run["thread_id"], run_id=run["run_id"])).status_code == 200
    # The reference client ends there: the route is present, the run is not.
    async with httpx.AsyncClient(base_url=server.url) as http:
        reconciler = Reconciler(http, run["thread_id"], UNKNOWN_RUN)
        with pytest.raises(RunGone):
            await reconciler.settle(10)
        assert reconciler.route_available is True


async def test_a_queued_run_that_wrote_nothing_yet_is_pending(server: DevServer) -> None:
    first = await start_run(server, SLOW_TOOL, "first in line")
    queued = await start_run(
        server,
        SLOW_TOOL,
        "second in line",
        thread_id=first["thread_id"],
        multitask_strategy="enqueue",
    )
    body = (await final_answer(server, first["thread_id"], run_id=queued["run_id"])).json()
    assert (body["status"], body["complete"], body["content"]) == ("pending", False, ""), body
    done = (
        await final_answer(server, first["thread_id"], run_id=queued["run_id"], wait="30")
    ).json()
    assert (done["status"], done["content"], done["run_id"]) == (
        "success",
        SLOW_ANSWER,
        queued["run_id"],
    )


async def test_a_run_cancelled_before_it_wrote_anything_is_cancelled_at_once(
    server: DevServer,
) -> None:
    """A thread whose only run was cancelled before its first checkpoint (scheduled for
    later, cancelled before it began) reads that run's end at once, ``wait=`` too: not
    ``pending`` for ever (shared/repro/cancelled_before_checkpoint.sh)."""
    client = get_client(url=server.url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            thread_id, ASSISTANT, input=ask("Never started?"), after_seconds=600
        )
        await client.runs.cancel(thread_id, run["run_id"], wait=True, action="interrupt")
    finally:
        await client.aclose()
    for params in (
        {},
        {"run_id": run["run_id"]},
        {"wait": "20"},
        {"run_id": run["run_id"], "wait": "20"},
    ):
        started = time.monotonic()
        body = (await final_answer(server, thread_id, **params)).json()
        assert time.monotonic() - started < 5, f"{params} held its wait"
        assert (body["status"], body["complete"], body["content"]) == ("error", True, ""), body
        assert body["error"]["code"] == "run_cancelled", body
        assert (body["run_id"], body["checkpoint_id"]) == (run["run_id"], None), body
