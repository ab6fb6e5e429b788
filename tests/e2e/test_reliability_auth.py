"""With ``auth`` in ``langgraph.json`` and ``http.enable_custom_route_auth``, a real
``langgraph dev``: the route takes the same credentials as the built-in routes (the
WebUI sends ``X-Api-Key``), and a user never reads another user's thread — a 404, as
for an unknown thread, however the request is phrased.

The handler (``tests/support/auth_handler.py``) has no resource rules, so the built-in API lets
any user read any thread: what keeps Bob out of Alice's answer here is the route's own
check of ``langgraph_auth_user_id`` in checkpoint metadata.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.errors import ThreadNotFound
from tests.support.local_http import local_client
from tests.support.reliability import assert_error
from tests.support.servers import REPO, DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
ALICE = {"X-Api-Key": "key-alice"}
BOB = {"X-Api-Key": "key-bob"}
AUTH = {"path": str(REPO / "tests" / "support" / "auth_handler.py") + ":auth"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("auth")
    with langgraph_dev(root / "work", root / "data", auth=AUTH) as server:
        yield server


async def run_as(server: DevServer, headers: dict[str, str], question: str) -> dict[str, Any]:
    client = get_client(url=server.url, api_key=None, headers=headers)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            thread_id, ASSISTANT, input={"messages": [{"role": "user", "content": question}]}
        )
        await client.runs.join(thread_id, run["run_id"])
        return {"thread_id": thread_id, "run_id": run["run_id"]}
    finally:
        await client.aclose()


async def get(
    server: DevServer, path: str, headers: dict[str, str] | None = None, **params: Any
) -> httpx.Response:
    async with local_client(server.url, timeout=30) as http:
        return await http.get(path, params=params, headers=headers)


def final_answer(thread_id: str) -> str:
    return f"/api/threads/{thread_id}/final-answer"


async def test_route_takes_the_same_credentials_as_the_api(server: DevServer) -> None:
    alice = await run_as(server, ALICE, "Who may read this answer?")
    for headers in (None, {"X-Api-Key": "key-mallory"}, {"Authorization": "Bearer key-alice"}):
        builtin = await get(server, f"/threads/{alice['thread_id']}", headers)
        ours = await get(server, final_answer(alice["thread_id"]), headers)
        assert builtin.status_code == ours.status_code == 401, (builtin.text, ours.text)
        assert "Who may read" not in ours.text
    assert (await get(server, "/api/models", None)).status_code == 401
    assert (await get(server, "/api/models", ALICE)).status_code == 200


async def test_a_user_reads_only_their_own_threads(server: DevServer) -> None:
    question_a, question_b = "Alice's private question?", "Bob's own question?"
    alice = await run_as(server, ALICE, question_a)
    bob = await run_as(server, BOB, question_b)

    # The premise: langgraph-api records each run's user in checkpoint metadata.
    with closing(sqlite3.connect(f"file:{server.sessions_db}?mode=ro", uri=True)) as conn:
        users = {
            thread_id: user
            for thread_id, user in conn.execute(
                "SELECT thread_id, json_extract(metadata, '$.langgraph_auth_user_id') "
                "FROM checkpoints WHERE checkpoint_ns = '' AND thread_id IN (?, ?)",
                (alice["thread_id"], bob["thread_id"]),
            )
        }
    assert users == {alice["thread_id"]: "alice", bob["thread_id"]: "bob"}

    own = await get(server, final_answer(alice["thread_id"]), ALICE)
    assert own.status_code == 200, own.text
    assert own.json()["content"] == answer_for(question_a, [notes_for(question_a)])
    assert own.json()["source"] == "checkpointer"
    assert (await get(server, final_answer(bob["thread_id"]), BOB)).status_code == 200

    # Bob, however he asks for Alice's thread, learns nothing but "not found".
    for params in (
        {},
        {"run_id": alice["run_id"]},
        {"format": "text"},
        {"include_reasoning": "true"},
        {"wait": "2"},
        {"run_id": alice["run_id"], "wait": "1", "format": "text"},
    ):
        response = await get(server, final_answer(alice["thread_id"]), BOB, **params)
        assert_error(response, 404, "thread_not_found", retryable=False)
        assert "private" not in response.text
    unknown = await get(server, final_answer("00000000-0000-4000-8000-000000000000"), BOB)
    assert_error(unknown, 404, "thread_not_found", retryable=False)
    assert "Traceback" not in server.log()


async def test_a_thread_with_no_checkpoint_yet_reveals_nothing(server: DevServer) -> None:
    """A thread created but not yet run has no checkpoint naming its user: the route
    answers through the API, which can only say that no such run exists — to its owner
    and to anyone holding its id alike, with no content."""
    client = get_client(url=server.url, api_key=None, headers=ALICE)
    try:
        thread_id = (await client.threads.create())["thread_id"]
    finally:
        await client.aclose()
    for headers in (ALICE, BOB):
        response = await get(server, final_answer(thread_id), headers, run_id="r-1")
        assert_error(response, 404, "run_not_found", retryable=False)


async def test_a_made_up_run_id_on_another_users_thread_is_thread_not_found(
    server: DevServer,
) -> None:
    """Whatever the parameters, another user's thread is "not found" — not a 200
    ``pending`` (which would tell that the thread exists) and not ``run_not_found``."""
    alice = await run_as(server, ALICE, "Is my thread's existence private?")
    for params in (
        {"run_id": "made-up"},
        {"run_id": "00000000-0000-4000-8000-000000000000", "wait": "3"},
        {"run_id": "made-up", "format": "text"},
    ):
        response = await get(server, final_answer(alice["thread_id"]), BOB, **params)
        assert_error(response, 404, "thread_not_found", retryable=False)
    own = await get(server, final_answer(alice["thread_id"]), ALICE, run_id="made-up")
    assert_error(own, 404, "run_not_found", retryable=False)


async def test_the_api_fallback_checks_the_owner_too(server: DevServer) -> None:
    """When the direct read fails, the answer comes through the API — which, in process,
    skips the server's auth: the reader itself must refuse another user's checkpoint."""
    question = "Does the fallback keep secrets?"
    alice = await run_as(server, ALICE, question)
    reader = ApiAnswerReader(server.url)
    reader._client = get_client(url=server.url, api_key="key-bob")  # gets past the server
    try:
        with pytest.raises(ThreadNotFound):
            await reader.read(alice["thread_id"], user_id="bob")
        with pytest.raises(ThreadNotFound):
            await reader.read(alice["thread_id"], alice["run_id"], user_id="bob")
        own = await reader.read(alice["thread_id"], alice["run_id"], user_id="alice")
        assert own.content == answer_for(question, [notes_for(question)])
        assert own.source == "api"
    finally:
        await reader.close()
