"""The server dies mid-run and comes back on the same data dir: the client must end
with what the checkpoint holds and say truthfully whether the answer is complete."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.recovery import stream_with_recovery
from tests.support.servers import free_port, langgraph_dev, stop

pytestmark = pytest.mark.e2e

SLOW = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.05"}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "term"])
async def test_restart_mid_run_is_reported_truthfully(tmp_path: Path, sig: int) -> None:
    work, data, port = tmp_path / "work", tmp_path / "data", free_port()
    question = "What survives a restart?"
    with langgraph_dev(work, data, port=port, env=SLOW) as first:
        client = get_client(url=first.url, api_key=None)
        thread_id = (await client.threads.create())["thread_id"]
        await client.aclose()
        shown: list[str] = []
        recovery = asyncio.create_task(
            stream_with_recovery(
                first.url,
                thread_id,
                "EvoScientist",
                {"messages": [{"role": "user", "content": question}]},
                on_update=shown.append,
                stall_timeout=3.0,
                max_wait=10.0,
            )
        )
        while not shown:  # the answer has started streaming
            await asyncio.sleep(0.05)
            assert not recovery.done(), recovery
        await asyncio.to_thread(stop, first.process, sig)

    with langgraph_dev(work, data, port=port, env=SLOW) as second:
        result = await recovery
        async with httpx.AsyncClient(base_url=second.url) as http:
            truth = (
                await http.get(
                    f"/api/threads/{thread_id}/final-answer", params={"run_id": result["run_id"]}
                )
            ).json()

    assert result["truncated"] is True
    assert result["content"] == truth["content"]
    assert result["complete"] == truth["complete"]
    if result["complete"]:
        assert result["status"] in {"success", "error"}
        if result["status"] == "success":
            assert result["content"] == answer_for(question, [notes_for(question)])
    else:
        # Never a partial answer dressed up as final.
        assert result["status"] in {"running", "pending"}
        assert result["content"] != answer_for(question, [notes_for(question)])
