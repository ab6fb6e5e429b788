"""Bad data in a real ``sessions.db``: the route answers what can be answered, and says
clearly what cannot — never a 500, never a traceback, one log line naming the thread.

Each store is written by real graphs (``tests/support/seeds.py``), then damaged with SQL the way
a bad disk, a half-copied file, a pruning job or a newer langgraph would leave it, or
written by a real, differently configured serializer.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import ormsgpack
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store import lazy
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.reliability import (
    assert_error,
    assert_one_line_naming,
    chain,
    head_blob,
    problem_lines,
    repack,
    update_head,
    writer,
)
from tests.support.seeds import (
    AGENT_NAME,
    DELTA_PREAMBLE,
    REASONING_CASES,
    SeededThread,
    Seeder,
    answer_client,
    expected_answer,
    open_seeder,
    route,
)

pytestmark = pytest.mark.usefixtures("quiet_serde_warnings")

AES_KEY = b"0123456789abcdef0123456789abcdef"


@pytest.fixture
def quiet_serde_warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)


async def read_answer(
    db_path: Path, thread_id: str, *, lazy_decoding: bool = True, **params: Any
) -> httpx.Response:
    service = FinalAnswerService(
        SqliteAnswerReader(db_path, AGENT_NAME, lazy_decoding=lazy_decoding), None
    )
    app = create_app(lambda: service)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.get(route(thread_id), params=params)
    finally:
        await service.close()


async def assert_unreadable(
    db_path: Path, thread: SeededThread, caplog: pytest.LogCaptureFixture, *words: str
) -> None:
    """Both decoders give the documented error, each with one log line naming the thread."""
    for lazy_decoding in (True, False):
        caplog.clear()
        response = await read_answer(db_path, thread.thread_id, lazy_decoding=lazy_decoding)
        assert_error(response, 503, "checkpoint_unreadable", retryable=False)
        assert "retry-after" not in response.headers
        assert_one_line_naming(caplog, thread.thread_id, "unreadable", *words)


async def assert_still_answers(db_path: Path, thread: SeededThread, content: str) -> None:
    for lazy_decoding in (True, False):
        response = await read_answer(db_path, thread.thread_id, lazy_decoding=lazy_decoding)
        assert response.status_code == 200, response.text
        assert response.json()["content"] == content


@pytest.fixture
async def two_threads(seeder: Seeder) -> tuple[SeededThread, SeededThread, dict[str, str]]:
    """A chat thread to damage, and a bystander thread that must keep answering."""
    victim = await seeder.chat(["first answer", "the answer to damage"])
    bystander = await seeder.agent(("Is the bystander fine?",))
    expected = {t.thread_id: expected_answer(await t.state()) for t in (victim, bystander)}
    return victim, bystander, expected


# ------------------------------------------------------------------ damaged blobs


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda blob: blob[: len(blob) // 2], id="truncated"),
        pytest.param(lambda blob: blob[:1], id="one-byte"),
        pytest.param(lambda blob: b"\xc1" + blob[1:], id="invalid-msgpack"),
        pytest.param(lambda blob: bytes(len(blob)), id="zeroed"),
    ],
)
async def test_damaged_checkpoint_blob(
    db_path: Path, two_threads: Any, damage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    victim, bystander, expected = two_threads
    update_head(
        db_path, victim.thread_id, "checkpoint = ?", damage(head_blob(db_path, victim.thread_id))
    )
    await assert_unreadable(db_path, victim, caplog)
    await assert_still_answers(db_path, bystander, expected[bystander.thread_id])


async def test_null_checkpoint_blob(
    db_path: Path, two_threads: Any, caplog: pytest.LogCaptureFixture
) -> None:
    victim, bystander, expected = two_threads
    update_head(db_path, victim.thread_id, "checkpoint = NULL")
    await assert_unreadable(db_path, victim, caplog)
    await assert_still_answers(db_path, bystander, expected[bystander.thread_id])


@pytest.mark.parametrize("type_", ["pickle", "protobuf-v9", "msgpack+zstd"])
async def test_unknown_serializer_type(
    db_path: Path, two_threads: Any, type_: str, caplog: pytest.LogCaptureFixture
) -> None:
    victim, bystander, expected = two_threads
    update_head(db_path, victim.thread_id, "type = ?", type_)
    await assert_unreadable(db_path, victim, caplog, "Unknown serialization type")
    await assert_still_answers(db_path, bystander, expected[bystander.thread_id])


async def test_metadata_that_is_not_json(
    db_path: Path, two_threads: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A row whose metadata is not JSON must not break the head query of the thread (it
    would fail every read of it, as ``malformed JSON``), nor of any other thread."""
    victim, bystander, expected = two_threads
    update_head(db_path, victim.thread_id, "metadata = ?", b"{not json")
    await assert_unreadable(db_path, victim, caplog)
    await assert_still_answers(db_path, bystander, expected[bystander.thread_id])


async def test_damaged_error_write(seeder: Seeder, caplog: pytest.LogCaptureFixture) -> None:
    failed = await seeder.failed("kaboom")
    with writer(seeder.db_path) as conn:
        cur = conn.execute(
            "UPDATE writes SET value = x'c1c1c1' WHERE thread_id = ? AND channel = '__error__'",
            (failed.thread_id,),
        )
        assert cur.rowcount == 1
    await assert_unreadable(seeder.db_path, failed, caplog)


# ------------------------------------------------------------------ other serializers


async def test_encrypted_serializer_without_its_key(
    db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store written with langgraph's ``EncryptedSerializer`` (AES, as
    ``LANGGRAPH_AES_KEY`` configures it) read by a process that has no key."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    serde = EncryptedSerializer.from_pycryptodome_aes(key=AES_KEY)
    async with AsyncSqliteSaver.from_conn_string(str(db_path)) as plain:
        saver = AsyncSqliteSaver(plain.conn, serde=serde)
        await saver.setup()
        seeder = Seeder(db_path, saver)
        secret = await seeder.chat(["an encrypted answer"])
        assert expected_answer(await secret.state()) == "an encrypted answer"
    with writer(db_path) as conn:
        types = {t for (t,) in conn.execute("SELECT DISTINCT type FROM checkpoints")}
    assert types == {"msgpack+aes"}
    await assert_unreadable(db_path, secret, caplog, "Unknown serialization type")


async def test_messages_channel_holding_dicts(db_path: Path) -> None:
    """A graph whose state keeps plain dicts (JSON input, no ``add_messages``): the
    checkpoint's messages are dicts, and the route reads them as messages."""

    class DictState(TypedDict):
        messages: list

    reasoning = REASONING_CASES[0]

    def reply(state: dict[str, Any]) -> dict[str, Any]:
        return {
            "messages": [
                *state["messages"],
                {"role": "assistant", "content": "dict draft"},
                {"bogus": "not a message at all"},
                {"type": "ai", "content": reasoning.message.content, "id": "ai-dict-1"},
                {"role": "tool", "content": "tool output", "tool_call_id": "t1"},
            ]
        }

    builder = StateGraph(DictState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    async with open_seeder(db_path) as seeder:
        thread = seeder.thread(builder.compile(checkpointer=seeder.saver), label="dicts")
        await seeder.run(thread, {"messages": [{"role": "user", "content": "dicts please"}]})
        stored = (await thread.state()).values["messages"]
        assert all(isinstance(m, dict) for m in stored)
    for lazy_decoding in (True, False):
        response = await read_answer(db_path, thread.thread_id, lazy_decoding=lazy_decoding)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["content"] == reasoning.text
        assert reasoning.hidden not in body["content"]
        assert body["message_id"] == "ai-dict-1"
        assert body["status"] == "success" and body["complete"] is True


async def test_checkpoint_from_a_newer_langgraph(db_path: Path, seeder: Seeder) -> None:
    """Keys this langgraph does not know — in the checkpoint, its channel values (an
    object of a module that does not exist here), the answering message and the
    metadata — are ignored: the answer is the same as before."""
    thread = await seeder.chat(["old answer", "the newest answer"])
    before = await read_answer(db_path, thread.thread_id)
    assert before.status_code == 200

    checkpoint = lazy.parse(head_blob(db_path, thread.thread_id))
    checkpoint["v"] = 99
    checkpoint["future_field"] = {"shards": [1, 2, 3], "codec": "zz"}
    future_object = ormsgpack.packb(["langgraph.channels.future", "Hologram", {"depth": 3}])
    checkpoint["channel_values"]["future_channel"] = lazy.Ext(2, future_object)
    checkpoint["channel_versions"]["future_channel"] = "99.0"
    messages = checkpoint["channel_values"]["messages"]
    newest = messages[-1]
    module, name, fields, *rest = ormsgpack.unpackb(newest.data, ext_hook=lazy.Ext)
    fields = {**fields, "future_field": {"nested": True}, "tone": "calm"}
    messages[-1] = lazy.Ext(newest.code, repack([module, name, fields, *rest]))
    update_head(db_path, thread.thread_id, "checkpoint = ?", repack(checkpoint))
    update_head(
        db_path,
        thread.thread_id,
        "metadata = json_set(CAST(metadata AS TEXT), '$.future_meta', json('[1,2]'))",
    )

    for lazy_decoding in (True, False):
        after = await read_answer(db_path, thread.thread_id, lazy_decoding=lazy_decoding)
        assert after.status_code == 200, after.text
        assert after.json() == before.json()
        assert after.json()["content"] == "the newest answer"


# ------------------------------------------------------------------ pruned history


async def delta_thread(seeder: Seeder) -> tuple[SeededThread, list[tuple[str, bool]]]:
    """A DeltaChannel thread whose head holds no messages (they must be rebuilt)."""
    thread = await seeder.chat(
        [f"delta answer {i}" for i in range(5)], mode="delta", preamble=DELTA_PREAMBLE
    )
    ancestry = chain(seeder.db_path, thread.thread_id)
    if ancestry[0][1]:  # the head is a snapshot: one more turn moves it off
        await seeder.run(thread, {"messages": [HumanMessage("one more")]})
        ancestry = chain(seeder.db_path, thread.thread_id)
    assert not ancestry[0][1]
    return thread, ancestry


def prune(db_path: Path, thread_id: str, oldest_kept: str) -> None:
    """Delete every root checkpoint older than ``oldest_kept``, and their writes."""
    with writer(db_path) as conn:
        for table in ("checkpoints", "writes"):
            conn.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = '' "
                "AND checkpoint_id < ?",
                (thread_id, oldest_kept),
            )


async def test_delta_history_pruned_before_any_snapshot(
    seeder: Seeder, caplog: pytest.LogCaptureFixture
) -> None:
    thread, ancestry = await delta_thread(seeder)
    snapshot = next(i for i, (_, has_messages) in enumerate(ancestry) if has_messages)
    # Keep the checkpoints newer than the nearest snapshot; the snapshot and all before go.
    prune(seeder.db_path, thread.thread_id, ancestry[snapshot - 1][0])
    await assert_unreadable(seeder.db_path, thread, caplog, "pruned")


async def test_delta_history_pruned_after_a_snapshot_still_answers(seeder: Seeder) -> None:
    thread, ancestry = await delta_thread(seeder)
    expected = expected_answer(await thread.state())
    snapshot = next(i for i, (_, has_messages) in enumerate(ancestry) if has_messages)
    prune(seeder.db_path, thread.thread_id, ancestry[snapshot][0])  # the snapshot stays
    await assert_still_answers(seeder.db_path, thread, expected)


async def test_unreadable_head_does_not_poison_other_requests(
    db_path: Path, two_threads: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """One long-lived connection serves every request: after a decode failure it still
    answers the other threads, and the damaged one the same way every time."""
    victim, bystander, expected = two_threads
    update_head(db_path, victim.thread_id, "checkpoint = ?", b"\x00garbage")
    async with answer_client(db_path) as client:
        for _ in range(3):
            bad = await client.get(route(victim.thread_id), params={"format": "text"})
            assert_error(bad, 503, "checkpoint_unreadable", retryable=False)
            good = await client.get(route(bystander.thread_id))
            assert good.status_code == 200
            assert good.json()["content"] == expected[bystander.thread_id]
    assert len(problem_lines(caplog)) == 3
