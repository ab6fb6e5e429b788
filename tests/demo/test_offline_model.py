"""``OfflineChatModel``: deterministic, tool-calling, reasoning, streaming — and the
agent graph it drives, whose checkpoints the route reads."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage

from EvoScientist import settings
from EvoScientist.agent import TOOLS
from EvoScientist.offline_model import (
    TOOL_NAME,
    OfflineChatModel,
    answer_for,
    notes_for,
    reasoning_for,
    tokenize,
)
from evoscientist_final_answer.answer.extract import answer_text, reasoning_text
from tests.support.seeds import Seeder, expected_answer

QUESTION = "Does caffeine improve recall?"


@pytest.fixture
def model() -> OfflineChatModel:
    return OfflineChatModel(token_delay=0)


@pytest.mark.parametrize(
    "text",
    ["", "one", "  leading and trailing  ", "a\n\nb\tc", answer_for("q", ["n"]), "漢字 😀  x"],
)
def test_tokenize_round_trips(text: str) -> None:
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert all(tokens)


def test_answer_is_a_function_of_question_and_notes() -> None:
    assert answer_for(QUESTION, ["n1"]) == answer_for(QUESTION, ["n1"])
    assert answer_for(QUESTION, ["n1"]) != answer_for(QUESTION, ["n2"])
    assert answer_for(QUESTION, ["n1"]) != answer_for("Another question?", ["n1"])
    assert "no notes were found" in answer_for(QUESTION, [])
    assert notes_for(QUESTION) == notes_for(QUESTION) != notes_for("other")


async def test_first_step_calls_the_tool(model: OfflineChatModel) -> None:
    reply = await model.ainvoke([HumanMessage(QUESTION)])
    assert isinstance(reply, AIMessage)
    assert reply.text == ""
    (call,) = reply.tool_calls
    assert call["name"] == TOOL_NAME == TOOLS[0].name
    assert call["args"] == {"query": QUESTION}
    assert call["id"].startswith("call_")


async def test_after_the_tool_it_answers_with_reasoning_then_text(model: OfflineChatModel) -> None:
    call = (await model.ainvoke([HumanMessage(QUESTION)])).tool_calls[0]
    note = notes_for(QUESTION)
    history = [
        HumanMessage(QUESTION),
        AIMessage("", tool_calls=[call]),
        ToolMessage(note, tool_call_id=call["id"]),
    ]
    reply = await model.ainvoke(history)
    assert reply.tool_calls == []
    kinds = [block["type"] for block in reply.content]
    assert kinds == ["reasoning", "text"]
    assert reply.text == answer_text(reply) == answer_for(QUESTION, [note])
    assert reasoning_text(reply) == reasoning_for(QUESTION)


async def test_stream_chunks_add_up_to_the_reply(model: OfflineChatModel) -> None:
    history = [
        HumanMessage(QUESTION),
        AIMessage("", tool_calls=[{"name": TOOL_NAME, "args": {"query": QUESTION}, "id": "c"}]),
        ToolMessage("a note", tool_call_id="c"),
    ]
    chunks = [chunk async for chunk in model.astream(history)]
    assert len(chunks) > 20  # token by token
    assert all(isinstance(chunk, AIMessageChunk) for chunk in chunks)
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert total.text == answer_for(QUESTION, ["a note"])
    assert reasoning_text(total) == reasoning_for(QUESTION)


async def test_sync_invoke_matches_async(model: OfflineChatModel) -> None:
    history = [HumanMessage(QUESTION)]
    sync_reply = model.invoke(history)
    async_reply = await model.ainvoke(history)
    assert sync_reply.tool_calls == async_reply.tool_calls
    assert json.loads(json.dumps(sync_reply.tool_calls[0]["args"])) == {"query": QUESTION}


async def test_the_agent_graph_runs_a_full_tool_turn(seeder: Seeder) -> None:
    thread = await seeder.agent((QUESTION,))
    snapshot = await thread.state()
    human, call, tool, final = snapshot.values["messages"]
    assert isinstance(human, HumanMessage) and human.text == QUESTION
    assert call.tool_calls and call.tool_calls[0]["name"] == TOOL_NAME
    assert isinstance(tool, ToolMessage) and tool.text == notes_for(QUESTION)
    assert expected_answer(snapshot) == final.text == answer_for(QUESTION, [notes_for(QUESTION)])
    assert snapshot.next == ()


# ------------------------------------------------------------------ its settings


def test_token_delay_default_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", raising=False)
    assert settings.offline_token_delay() == settings.DEFAULT_TOKEN_DELAY
    assert OfflineChatModel().token_delay == settings.DEFAULT_TOKEN_DELAY
    monkeypatch.setenv("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", "0")
    assert OfflineChatModel().token_delay == 0.0


@pytest.mark.parametrize("raw", ["-0.1", "fast"])
def test_bad_token_delay_is_rejected(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", raw)
    with pytest.raises(ValueError, match="EVOSCIENTIST_OFFLINE_TOKEN_DELAY"):
        settings.offline_token_delay()
