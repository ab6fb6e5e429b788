"""Standalone, a run its fallback API holds busy is never called lost.

A real ``langgraph dev`` runs a tool that stays silent for seconds; the standalone app
reads that server's ``sessions.db`` directly, with the server as its fallback API
(``EVOSCIENTIST_LANGGRAPH_URL``) and a silence bound far shorter than the tool call.
The direct read answers, so the fallback was never asked, and the run read ``run_lost``
once silent past the bound; the docs say a fallback that reports the thread busy
vouches for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest
from langgraph_sdk import get_client

from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.server.fallback import FallbackApi
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.seeds import AGENT_NAME, route
from tests.support.servers import DevServer, langgraph_dev, listening
from tests.support.slow_tool_graph import SLOW_ANSWER

pytestmark = pytest.mark.e2e

SLOW_TOOL = "SlowTool"
TOOL_SECONDS = 5.0
SILENCE_BOUND = 0.5


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("busy-fallback")
    with langgraph_dev(
        root / "work",
        root / "data",
        extra_graphs={SLOW_TOOL: "tests/support/slow_tool_graph.py:graph"},
        env={"EVOSCIENTIST_TEST_TOOL_SECONDS": str(TOOL_SECONDS)},
    ) as server:
        yield server


async def test_a_silent_run_the_fallback_holds_busy_is_running(server: DevServer) -> None:
    client = get_client(url=server.url, api_key=None)
    api = ApiAnswerReader(server.url)
    service = FinalAnswerService(
        SqliteAnswerReader(server.sessions_db, AGENT_NAME),
        api,
        silence_bound=SILENCE_BOUND,
        server=FallbackApi(api),
    )
    try:
        thread_id = (await client.threads.create())["thread_id"]
        run = await client.runs.create(thread_id, SLOW_TOOL, input={"messages": []})
        async with (
            listening(create_app(lambda: service)) as port,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        ):
            started = time.monotonic()
            seen: list[tuple[float, str]] = []
            while True:
                response = await http.get(route(thread_id))
                if response.status_code == 200:
                    body = response.json()
                    seen.append((time.monotonic() - started, body["status"]))
                    if body["complete"]:
                        break
                assert time.monotonic() - started < TOOL_SECONDS + 20, seen
                await asyncio.sleep(0.2)
            assert (body["status"], body["content"]) == ("success", SLOW_ANSWER), body
            assert body["run_id"] == run["run_id"]
            running = [at for at, status in seen if status == "running"]
            assert {status for _, status in seen} <= {"pending", "running", "success"}, seen
            # Asked while silent far past the bound, and never called lost.
            assert running and max(running) - min(running) > 3 * SILENCE_BOUND + 2, seen
    finally:
        await client.aclose()
        await service.close()
