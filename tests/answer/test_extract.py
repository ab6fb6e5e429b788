"""``answer.extract``: which message answers the latest turn, and its text without the
reasoning. Real thread states where the case comes from a run; single messages where
the case is one message's shape."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from EvoScientist.offline_model import answer_for, notes_for, reasoning_for
from evoscientist_final_answer.answer.extract import (
    NO_ANSWER,
    answer_text,
    coerce_messages,
    final_answer,
    latest_turn,
    reasoning_text,
    split_think,
)
from tests.support.seeds import REASONING_CASES, ReasoningCase, Seeder, expected_message

# ------------------------------------------------------------------ <think>


@pytest.mark.parametrize(
    ("text", "answer", "reasoning"),
    [
        ("<think>weigh it</think>The answer.", "The answer.", "weigh it"),
        ("  \n<think>\nline 1\nline 2\n</think>\n\nThe answer.", "The answer.", "line 1\nline 2"),
        ("<think>still thinking, no close yet", "", "still thinking, no close yet"),
        ("<think></think>Only answer", "Only answer", ""),
        ("<think>a</think>B <think>c</think>", "B <think>c</think>", "a"),
        ("The answer mentions <think>tags</think> later.", None, ""),
        ("No reasoning at all.", None, ""),
        ("", "", ""),
    ],
)
def test_split_think(text: str, answer: str | None, reasoning: str) -> None:
    assert split_think(text) == (text if answer is None else answer, reasoning)


# ------------------------------------------------------------------ formats


@pytest.mark.parametrize("case", REASONING_CASES, ids=lambda case: case.name)
def test_answer_text_and_reasoning_per_format(case: ReasoningCase) -> None:
    assert answer_text(case.message) == case.text
    assert case.hidden not in answer_text(case.message)
    reasoning = reasoning_text(case.message)
    assert case.reasoning in reasoning
    if case.reasoning:
        assert reasoning.count(case.reasoning) == 1  # never doubled
    else:
        assert case.hidden not in reasoning  # redacted stays redacted


def test_openai_summary_parts_are_all_kept() -> None:
    (case,) = [c for c in REASONING_CASES if c.name == "openai_reasoning_summary"]
    assert reasoning_text(case.message) == "OAI-SUMMARY-1: plan\n\nOAI-SUMMARY-2: verify"


def test_text_blocks_join_like_message_text() -> None:
    message = AIMessage(content=["part one, ", {"type": "text", "text": "part two"}])
    assert answer_text(message) == message.text == "part one, part two"


# ------------------------------------------------------------------ turns


async def test_final_answer_on_a_real_agent_thread(seeder: Seeder) -> None:
    thread = await seeder.agent(("Why test?", "How to report?"))
    snapshot = await thread.state()
    answer = final_answer(snapshot.values["messages"])
    assert answer.content == answer_for("How to report?", [notes_for("How to report?")])
    assert answer.reasoning == reasoning_for("How to report?")
    assert answer.message_id == expected_message(snapshot).id


async def test_final_answer_of_each_run_in_history(seeder: Seeder) -> None:
    thread = await seeder.agent(("one?", "two?", "three?"))
    for run_id in thread.run_ids:
        snapshot = thread.snapshots[run_id]
        assert final_answer(snapshot.values["messages"]).message_id == expected_message(snapshot).id


async def test_turn_without_answer_yet_has_none(seeder: Seeder) -> None:
    thread = await seeder.agent_stopped_before_answer()
    messages = (await thread.state()).values["messages"]
    assert any(isinstance(m, AIMessage) and m.text for m in messages)  # the old answer
    assert final_answer(messages) == NO_ANSWER


def test_tool_call_only_message_does_not_hide_earlier_text() -> None:
    messages = [
        HumanMessage("q"),
        AIMessage("Let me look that up.", id="said"),
        AIMessage("", id="call", tool_calls=[{"name": "search", "args": {}, "id": "c1"}]),
    ]
    answer = final_answer(messages)
    assert (answer.content, answer.message_id) == ("Let me look that up.", "said")


def test_reasoning_only_message_in_progress_is_skipped() -> None:
    messages = [
        HumanMessage("q"),
        AIMessage("Interim text", id="interim"),
        ToolMessage("result", tool_call_id="c1"),
        AIMessage("<think>still reasoning about the result", id="streaming"),
    ]
    assert final_answer(messages).message_id == "interim"


def test_human_message_without_text_does_not_start_a_turn() -> None:
    messages = [
        HumanMessage("real question"),
        AIMessage("first part", id="a1"),
        HumanMessage("   "),
        HumanMessage([{"type": "image", "url": "https://example.com/x.png"}]),
        AIMessage("second part", id="a2"),
    ]
    assert latest_turn(messages) == messages[1:]
    assert final_answer(messages).message_id == "a2"


def test_thread_without_human_message_is_one_turn() -> None:
    messages = [SystemMessage("sys"), AIMessage("greeting", id="g")]
    assert latest_turn(messages) == messages
    assert final_answer(messages).content == "greeting"


def test_no_messages_no_answer() -> None:
    assert final_answer([]) == NO_ANSWER
    assert final_answer([HumanMessage("q")]) == NO_ANSWER


# ------------------------------------------------------------------ JSON messages


async def test_coerce_messages_from_dumped_state(seeder: Seeder) -> None:
    thread = await seeder.agent()
    messages = (await thread.state()).values["messages"]
    dumped = [m.model_dump() for m in messages]
    restored = coerce_messages(dumped)
    assert [type(m) for m in restored] == [type(m) for m in messages]
    assert [m.id for m in restored] == [m.id for m in messages]
    assert [m.content for m in restored] == [m.content for m in messages]
    assert final_answer(restored) == final_answer(messages)


def test_coerce_messages_drops_unrecognisable_entries() -> None:
    good = AIMessage("kept", id="k")
    restored = coerce_messages(
        [{"nonsense": True}, 42, None, good, {"type": "human", "content": "q", "id": "h"}]
    )
    assert [m.id for m in restored] == ["k", "h"]
    assert restored[0] is good


def test_openai_summary_without_provider_is_still_reasoning() -> None:
    """A Responses-API summary block stored without ``model_provider``: not content, and
    still returned as reasoning."""
    message = AIMessage(
        content=[
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [
                    {"type": "summary_text", "text": "weigh A"},
                    {"type": "summary_text", "text": "then B"},
                ],
            },
            {"type": "text", "text": "Answer."},
        ]
    )
    assert answer_text(message) == "Answer."
    assert reasoning_text(message) == "weigh A\n\nthen B"
