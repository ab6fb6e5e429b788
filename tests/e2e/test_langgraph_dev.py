"""End-to-end: the offline agent run through a real ``langgraph dev``, answered by the route.

Once through the direct path (the server's checkpointer writes ``sessions.db``, the
route reads it) and once through the fallback (no SQLite checkpointer configured: the
route answers through ``langgraph_sdk``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.answer.state import answer_from_state
from tests.support.postgres import temporary_schema
from tests.support.servers import DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"


@pytest.fixture(scope="module")
def direct_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("direct")
    with langgraph_dev(root / "work", root / "data") as server:
        yield server


@pytest.fixture(scope="module")
def api_only_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("api-only")
    with langgraph_dev(root / "work", root / "data", checkpointer=False) as server:
        yield server


def expected_answer(question: str) -> str:
    """What the offline agent answers: its tool's note for the question, then the answer."""
    return answer_for(question, [notes_for(question)])


async def run_to_end(url: str, question: str, thread_id: str | None = None) -> dict[str, Any]:
    client = get_client(url=url, api_key=None)
    try:
        if thread_id is None:
            thread_id = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            thread_id, ASSISTANT, input={"messages": [{"role": "user", "content": question}]}
        )
        await client.runs.join(thread_id, run["run_id"])
        state = await client.threads.get_state(thread_id)
        return {"thread_id": thread_id, "run_id": run["run_id"], "state": state}
    finally:
        await client.aclose()


async def final_answer(url: str, thread_id: str, **params: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=70) as http:
        return await http.get(f"/api/threads/{thread_id}/final-answer", params=params)


async def test_completed_run_is_read_from_sessions_db(direct_server: DevServer) -> None:
    question = "How should I test a hypothesis about protein folding?"
    run = await run_to_end(direct_server.url, question)

    response = await final_answer(direct_server.url, run["thread_id"])

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["source"] == "checkpointer"
    assert body["complete"] is True
    assert body["status"] == "success"
    assert body["run_id"] == run["run_id"]
    assert body["content"] == expected_answer(question)
    # The server's own state agrees, through the same extraction.
    assert body["content"] == answer_from_state(run["thread_id"], run["state"]).content
    assert body["checkpoint_id"] == run["state"]["checkpoint"]["checkpoint_id"]
    assert body["completed_at"] is not None
    assert "reasoning" not in body and "The user asks" not in body["content"]
    assert direct_server.sessions_db.is_file()


async def test_running_run_is_not_complete_until_it_settles(direct_server: DevServer) -> None:
    question = "Summarise the evidence on sleep and memory."
    client = get_client(url=direct_server.url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            thread_id, ASSISTANT, input={"messages": [{"role": "user", "content": question}]}
        )
        early = await final_answer(direct_server.url, thread_id, run_id=run["run_id"])
        assert early.status_code == 200, early.text
        assert early.json()["complete"] is False
        assert early.json()["status"] in {"pending", "running"}

        settled = await final_answer(direct_server.url, thread_id, run_id=run["run_id"], wait=30)
        body = settled.json()
        assert body["complete"] is True, body
        assert body["status"] == "success", body
        assert body["content"] == expected_answer(question)
        assert (await client.threads.get(thread_id))["status"] == "idle"
    finally:
        await client.aclose()


async def test_each_turn_answers_for_its_own_run(direct_server: DevServer) -> None:
    first = await run_to_end(direct_server.url, "First question: what is entropy?")
    second = await run_to_end(
        direct_server.url, "Second question: what is enthalpy?", first["thread_id"]
    )
    thread_id = first["thread_id"]

    latest = (await final_answer(direct_server.url, thread_id)).json()
    by_first = (await final_answer(direct_server.url, thread_id, run_id=first["run_id"])).json()

    assert latest["content"] == expected_answer("Second question: what is enthalpy?")
    assert latest["run_id"] == second["run_id"]
    assert by_first["content"] == expected_answer("First question: what is entropy?")
    assert by_first["run_id"] == first["run_id"]


async def test_plain_text_for_curl(direct_server: DevServer) -> None:
    question = "Plain text please."
    run = await run_to_end(direct_server.url, question)
    response = await final_answer(direct_server.url, run["thread_id"], format="text")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == expected_answer(question)
    assert response.headers["x-answer-complete"] == "true"


def startup_log(server: DevServer) -> list[str]:
    """The server's log lines up to "Application started up", colours stripped."""
    lines = re.sub(r"\x1b\[[0-9;]*m", "", server.log()).splitlines()
    end = next(i for i, line in enumerate(lines) if "Application started up" in line)
    return lines[: end + 1]


async def test_the_server_starts_without_a_warning(direct_server: DevServer) -> None:
    lines = startup_log(direct_server)
    assert any("Using custom checkpointer: MaintainedSqliteSaver" in line for line in lines)
    assert [line for line in lines if re.search(r"\[(warning|error)", line)] == []
    assert not any("Custom checkpointer missing" in line for line in lines)


async def test_a_postgres_backed_server_starts_without_a_warning(
    postgres_database: str, tmp_path: Path
) -> None:
    async with temporary_schema(postgres_database) as uri:
        env = {"EVOSCIENTIST_DATABASE_URI": uri}
        with langgraph_dev(tmp_path / "work", tmp_path / "data", env=env) as server:
            lines = startup_log(server)
    assert any("Using custom checkpointer: MaintainedPostgresSaver" in line for line in lines)
    assert [line for line in lines if re.search(r"\[(warning|error)", line)] == []


async def test_a_copied_thread_answers_as_its_source(direct_server: DevServer) -> None:
    question = "Copy me: what is a control group?"
    run = await run_to_end(direct_server.url, question)
    client = get_client(url=direct_server.url, api_key=None)
    try:
        copy = await client.threads.copy(run["thread_id"])  # the saver's acopy_thread
    finally:
        await client.aclose()

    response = await final_answer(direct_server.url, copy["thread_id"])

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["source"] == "checkpointer"
    assert body["content"] == expected_answer(question)
    assert body["checkpoint_id"] == run["state"]["checkpoint"]["checkpoint_id"]


async def test_a_rolled_back_run_leaves_no_checkpoint(direct_server: DevServer) -> None:
    """``multitask_strategy="rollback"`` cancels the run in flight and deletes its
    checkpoints through the saver's ``adelete_for_runs``."""
    client = get_client(url=direct_server.url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        message = {"messages": [{"role": "user", "content": "Rolled back: a long question?"}]}
        doomed = await client.runs.create(thread_id, ASSISTANT, input=message)
        question = "Kept: what is a p-value?"
        kept = await client.runs.create(
            thread_id,
            ASSISTANT,
            input={"messages": [{"role": "user", "content": question}]},
            multitask_strategy="rollback",
        )
        await client.runs.join(thread_id, kept["run_id"])
        history = await client.threads.get_history(thread_id, limit=100)
    finally:
        await client.aclose()

    assert {h["metadata"].get("run_id") for h in history} == {kept["run_id"]}
    assert doomed["run_id"] != kept["run_id"]
    body = (await final_answer(direct_server.url, thread_id)).json()
    assert body["run_id"] == kept["run_id"]
    assert body["content"] == expected_answer(question)


async def test_models_route_is_mounted_beside_the_api(direct_server: DevServer) -> None:
    async with httpx.AsyncClient(base_url=direct_server.url) as http:
        models = (await http.get("/api/models")).json()
        assert models["default"] == {"name": "offline", "provider": "offline"}
        # The server's own API is still there.
        assert (await http.get("/ok")).status_code == 200


async def test_unknown_thread_is_404_inside_the_server(direct_server: DevServer) -> None:
    for thread_id in ("deadbeef", "00000000-0000-0000-0000-000000000000"):
        response = await final_answer(direct_server.url, thread_id)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "thread_not_found"


async def test_fallback_answers_through_the_api(api_only_server: DevServer) -> None:
    question = "Which controls does a knockout experiment need?"
    run = await run_to_end(api_only_server.url, question)

    response = await final_answer(api_only_server.url, run["thread_id"])

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["source"] == "api"
    assert body["complete"] is True
    assert body["status"] == "success"
    assert body["content"] == expected_answer(question)
    assert body["checkpoint_id"] == run["state"]["checkpoint"]["checkpoint_id"]
    assert not Path(api_only_server.sessions_db).exists()

    by_run = await final_answer(api_only_server.url, run["thread_id"], run_id=run["run_id"])
    assert by_run.json()["content"] == expected_answer(question)
    assert by_run.json()["run_id"] == run["run_id"]
