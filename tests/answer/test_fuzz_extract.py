"""Property tests (hypothesis) of the extraction: for any messages and content blocks it
never raises, never returns reasoning in ``content`` (reasoning carries a marker, ``⟦``,
in every place a provider puts it), and agrees with the contract's definition of the
answer. ``EVOSCIENTIST_FUZZ=long`` runs a longer random search than ``make test``'s.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from evoscientist_final_answer.answer.extract import (
    coerce_messages,
    final_answer,
    final_answer_from_end,
    reasoning_text,
)
from tests.support.seeds import visible_text

MARK = "⟦"

settings.register_profile(
    "evoscientist-ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "evoscientist-long",
    max_examples=5_000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = (
    "evoscientist-long" if os.environ.get("EVOSCIENTIST_FUZZ") == "long" else "evoscientist-ci"
)

# Visible text: anything but the marker, with the characters the parsers care about.
_fragment = st.one_of(
    st.text(
        alphabet=st.characters(exclude_characters=MARK, exclude_categories=("Cs",)), max_size=8
    ),
    st.sampled_from(["<", ">", "/", "think", "\n", " ", "</think>", "<think>", "\u200b"]),
)
visible = st.lists(_fragment, max_size=5).map("".join)
secret = st.text(alphabet="abcdefghij \n<>/", max_size=10).map(lambda t: f"{MARK}{t}{MARK}")
provider = st.sampled_from([None, "anthropic", "openai", "google_genai", "bedrock", "xai"])


def _block(kind: str, value: str) -> dict[str, Any]:
    return {
        "text": {"type": "text", "text": value},
        "reasoning": {"type": "reasoning", "reasoning": value},
        "thinking": {"type": "thinking", "thinking": value, "signature": "sig"},
        "redacted": {"type": "redacted_thinking", "data": value},
        "summary": {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": value}],
        },
    }[kind]


text_block = visible.map(lambda t: _block("text", t))
reasoning_block = st.tuples(
    st.sampled_from(["reasoning", "thinking", "redacted", "summary"]), secret
).map(lambda kv: _block(*kv))
other_block = st.one_of(
    st.just({"type": "image", "url": "https://example.invalid/x.png"}),
    st.just({"type": "tool_use", "id": "tu_1", "name": "search", "input": {}}),
    st.builds(dict, type=st.sampled_from(["future_block", "", "text_delta"]), text=visible),
    st.dictionaries(st.sampled_from(["type", "text", "index", "extras"]), visible, max_size=3),
    st.builds(lambda i: {"type": "text", "text": "", "index": i}, st.integers(0, 3)),
)
block = st.one_of(text_block, reasoning_block, other_block, visible)


@st.composite
def ai_message(draw: st.DrawFn) -> AIMessage:
    if draw(st.booleans()):
        content: Any = draw(visible)
        if draw(st.booleans()):  # a leading inline think, closed or still streaming
            closing = draw(st.sampled_from(["</think>", ""]))
            lead = draw(st.sampled_from(["", " ", "\n"]))
            content = f"{lead}<think>{draw(secret)}{closing}{content}"
    else:
        content = draw(st.lists(block, max_size=6))
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        kwargs["additional_kwargs"] = {"reasoning_content": draw(secret)}
    name = draw(provider)
    if name is not None:
        kwargs["response_metadata"] = {"model_provider": name}
    return AIMessage(content=content, id=draw(st.none() | st.uuids().map(str)), **kwargs)


human_message = st.one_of(
    visible.map(HumanMessage),
    st.lists(st.one_of(text_block, visible), max_size=3).map(lambda c: HumanMessage(content=c)),
)
other_message = st.one_of(
    visible.map(SystemMessage),
    visible.map(lambda t: ToolMessage(content=t, tool_call_id="call_1")),
)
messages = st.lists(st.one_of(ai_message(), human_message, other_message), max_size=12)


def expected_content(history: list[BaseMessage]) -> str:
    """The contract, spelled out: the last AI message with visible text after the last
    human message with text."""
    start = 0
    for index, message in enumerate(history):
        if isinstance(message, HumanMessage) and message.text.strip():
            start = index + 1
    for message in reversed(history[start:]):
        if isinstance(message, AIMessage) and visible_text(message).strip():
            return visible_text(message)
    return ""


@settings(settings.get_profile(PROFILE))
@given(messages)
def test_extraction_never_raises_nor_leaks_reasoning(history: list[BaseMessage]) -> None:
    answer = final_answer(history)
    assert MARK not in answer.content
    assert answer.content == expected_content(history)
    assert final_answer_from_end(iter(reversed(history))) == answer
    if answer.message_id is not None:
        assert any(isinstance(m, AIMessage) and m.id == answer.message_id for m in history)
    for message in history:
        if isinstance(message, AIMessage):
            reasoning_text(message)  # never raises either


json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), visible)
json_value = st.recursive(
    json_scalar,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(visible, children, max_size=4)
    ),
    max_leaves=12,
)
message_like = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "ai", "human", "tool", "system", "x"]),
            "content": st.one_of(visible, st.lists(block, max_size=4), json_value),
        },
        optional={"id": json_value, "tool_call_id": visible, "type": visible},
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["ai", "human", "AIMessageChunk", "remove", "tool", "?"]),
            "content": st.one_of(visible, st.lists(block, max_size=4)),
        },
        optional={"id": visible, "additional_kwargs": json_value},
    ),
    ai_message(),
)


@settings(settings.get_profile(PROFILE))
@given(st.lists(message_like, max_size=10))
def test_state_values_of_any_shape_never_raise(raw: list[Any]) -> None:
    """What a messages channel may hold in JSON state or an odd checkpoint: whatever is
    not a message is dropped, the rest answers, reasoning never leaks."""
    built = coerce_messages(raw)
    assert all(isinstance(m, BaseMessage) for m in built)
    answer = final_answer(built)
    assert MARK not in answer.content
