"""The whole loop against a real ``langgraph dev``: streams cut, reset and stalled by a
proxy, and the client still ends with the checkpoint's answer, complete."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.recovery import stream_with_recovery
from tests.support.proxy import (
    STREAM_FAULTS,
    Fault,
    FaultProxy,
    measure_stream_bytes,
    stream_position,
)
from tests.support.servers import DevServer, langgraph_dev, new_thread

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
TOKEN_DELAY = "0.01"
STALL_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("recovery")
    with langgraph_dev(
        root / "work", root / "data", env={"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": TOKEN_DELAY}
    ) as dev:
        yield dev


async def checkpoint_answer(url: str, thread_id: str, run_id: str) -> dict[str, Any]:
    """The route's answer read straight from the server, no proxy in between."""
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=70) as http:
        response = await http.get(
            f"/api/threads/{thread_id}/final-answer", params={"run_id": run_id, "wait": 60}
        )
    return response.json()


@pytest.fixture(scope="module")
def stream_bytes(server: DevServer) -> int:
    """How many bytes one healthy run stream sends, to place faults within it."""

    async def measure() -> int:
        thread_id = await new_thread(server.url)
        return await measure_stream_bytes(server.port, thread_id, ASSISTANT, "baseline")

    return asyncio.run(measure())


def _ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


@pytest.mark.parametrize("name", list(STREAM_FAULTS))
async def test_client_ends_with_the_checkpoint_answer(
    server: DevServer, stream_bytes: int, name: str
) -> None:
    kind, where = STREAM_FAULTS[name]
    fault = Fault(kind=kind, after_bytes=stream_position(where, stream_bytes))
    question = f"Fault {name}: what should the control be?"
    shown: list[str] = []
    async with FaultProxy(server.port, fault) as proxy:
        thread_id = await new_thread(server.url)
        result = await stream_with_recovery(
            proxy.url,
            thread_id,
            ASSISTANT,
            _ask(question),
            on_update=shown.append,
            stall_timeout=STALL_TIMEOUT,
            max_wait=60,
        )
        assert proxy.stats.fired == 1, "the fault never fired"

    truth = await checkpoint_answer(server.url, thread_id, result["run_id"])
    assert truth["complete"] is True
    assert result["complete"] is True
    assert result["status"] == "success"
    assert result["content"] == truth["content"] == answer_for(question, [notes_for(question)])
    assert shown and shown[-1] == result["content"]
    if kind != "none" and where != 0.995:
        assert result["truncated"] is True
