"""kill -9 of ``langgraph dev`` mid-run, then a restart on the same data dir: the route
itself reports the thread truthfully, ``running`` before the restart and ``run_lost``
from the restarted server at once, keeping the partial answer, never dressed up as final.
(``tests/recovery/test_restart.py`` holds the client to the same.)
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from tests.support.seeds import answer_client, route
from tests.support.servers import free_port, langgraph_dev, stop

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
SLOW = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.05", "LANGGRAPH_DISABLE_FILE_PERSISTENCE": "true"}
# The target: the route tells within 60 s of the restart.
LOST_WITHIN_SECONDS = 60
QUESTION = "What does a crash leave behind?"


def assert_truthful(body: dict[str, Any], full_answer: str) -> None:
    """Complete only with the whole answer (success) or a stated error; otherwise the
    content is never dressed up as final."""
    assert body["status"] in {"pending", "running", "success", "error", "interrupted"}, body
    if body["complete"]:
        assert body["status"] in {"success", "error"}, body
        if body["status"] == "success":
            assert body["content"] == full_answer, body
        else:
            assert body["error"]["code"] in {"run_stopped", "run_failed", "run_lost"}, body
            assert body["content"] != full_answer or body["error"]["retryable"], body
    else:
        assert body["status"] in {"pending", "running"}, body
        assert body["completed_at"] is None
        assert body["content"] != full_answer, body


async def test_kill_9_mid_run_then_restart(tmp_path: Path) -> None:
    """The in-memory runtime flushes its runs to disk periodically, so a run killed before a
    flush is forgotten by the restarted server, and one killed after is retried by it. The
    flush is turned off (``LANGGRAPH_DISABLE_FILE_PERSISTENCE``) to get the first case every
    time; the second is a run the server knows, read as ``running``
    (``tests/answer/test_run_liveness.py``)."""
    work, data, port = tmp_path / "work", tmp_path / "data", free_port()
    full_answer = answer_for(QUESTION, [notes_for(QUESTION)])
    with langgraph_dev(work, data, port=port, env=SLOW) as first:
        client = get_client(url=first.url, api_key=None)
        try:
            thread_id = (await client.threads.create())["thread_id"]
            run = await client.runs.create(
                thread_id,
                ASSISTANT,
                input={"messages": [{"role": "user", "content": QUESTION}]},
            )
            # Wait until the run is well under way: a checkpoint after the tool call.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                history = await client.threads.get_history(thread_id, limit=10)
                if any(s["values"] and len(s["values"].get("messages", [])) >= 3 for s in history):
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the run never got under way")
        finally:
            await client.aclose()
        await asyncio.to_thread(stop, first.process, signal.SIGKILL)

    # The server is dead: the route (standalone, reading sessions.db) says "running".
    async with answer_client(data / "sessions.db") as standalone:
        dead = (await standalone.get(route(thread_id), params={"run_id": run["run_id"]})).json()
    assert dead["source"] == "checkpointer"
    assert dead["complete"] is False and dead["status"] == "running", dead
    assert_truthful(dead, full_answer)

    with langgraph_dev(work, data, port=port, env=SLOW) as second:
        restarted = time.monotonic()
        async with httpx.AsyncClient(base_url=second.url, timeout=40) as http:
            path = f"/api/threads/{thread_id}/final-answer"
            seen = [
                (await http.get(path, params={"run_id": run["run_id"]})).json(),
                (await http.get(path, params={"run_id": run["run_id"], "wait": "30"})).json(),
                (await http.get(path)).json(),
            ]
            told_after = time.monotonic() - restarted
            server_thread = await http.get(f"/threads/{thread_id}")
        log = second.log()
    # The premise: the restarted runtime has forgotten the thread and its run.
    assert server_thread.status_code == 404, server_thread.text
    print("after restart:", [(b["status"], b["complete"], len(b["content"])) for b in seen])
    for body in seen:
        assert_truthful(body, full_answer)
        assert (body["status"], body["complete"]) == ("error", True), body
        assert body["error"]["code"] == "run_lost" and body["error"]["retryable"] is False
        assert body["content"] == dead["content"] and body["checkpoint_id"] == dead["checkpoint_id"]
    assert told_after < LOST_WITHIN_SECONDS
    assert "Traceback" not in log.split("Application startup complete")[-1]
