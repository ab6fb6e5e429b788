"""Find the latest turn's answer in a message list and split it from its reasoning."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_messages

# A think block opened at the very start of the text; an unclosed one (a model still
# streaming its reasoning) swallows everything after it.
_LEADING_THINK = re.compile(r"\A\s*<think>(?P<reasoning>.*?)(?:</think>|\Z)\s*", re.DOTALL)

# Provider-specific places where reasoning hides outside ``content_blocks``.
_THINKING_BLOCK_TYPES = {"thinking": "thinking", "reasoning": "reasoning"}
_REASONING_KWARGS = ("reasoning_content",)


@dataclass(frozen=True)
class Answer:
    """The answering message of the latest turn, if it has one."""

    content: str
    reasoning: str
    message_id: str | None


NO_ANSWER = Answer(content="", reasoning="", message_id=None)


def split_think(text: str) -> tuple[str, str]:
    """Split a leading inline ``<think>…</think>`` off ``text``: ``(answer, reasoning)``.

    ``langchain_core``'s ``message.text`` already skips every non-text block (LC v1
    ``reasoning``, Anthropic ``thinking``, OpenAI reasoning summaries); reasoning inlined
    into the text itself is the one kind it cannot know about."""
    match = _LEADING_THINK.match(text)
    if match is None:
        return text, ""
    return text[match.end() :], match.group("reasoning").strip()


def answer_text(message: BaseMessage) -> str:
    """The user-visible text of ``message``: text blocks joined, reasoning removed."""
    return split_think(message.text)[0]


def _non_standard_reasoning(value: dict[str, Any]) -> list[str]:
    """Reasoning in provider blocks that ``content_blocks`` could not translate: Anthropic
    ``thinking``, and OpenAI reasoning summaries when the provider is not recorded."""
    field = _THINKING_BLOCK_TYPES.get(str(value.get("type")))
    if field and isinstance(value.get(field), str) and value[field]:
        return [value[field]]
    return _summary_texts(value.get("summary")) if value.get("type") == "reasoning" else []


def _summary_texts(summary: Any) -> list[str]:
    if not isinstance(summary, list):
        return []
    return [
        item["text"]
        for item in summary
        if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"]
    ]


def reasoning_text(message: BaseMessage) -> str:
    """Every piece of reasoning carried by ``message``, joined by blank lines."""
    parts: list[str] = []
    for block in message.content_blocks:
        kind = block.get("type")
        if kind == "reasoning":
            if block.get("reasoning"):
                parts.append(str(block["reasoning"]))
            else:  # an OpenAI summary block whose provider was not recorded
                parts.extend(_summary_texts(block.get("summary")))
        elif kind == "non_standard":
            value = block.get("value")
            if isinstance(value, dict):
                parts.extend(_non_standard_reasoning(value))
    if not any(block.get("type") == "reasoning" for block in message.content_blocks):
        # content_blocks already surfaces these for known providers; avoid doubling.
        for key in _REASONING_KWARGS:
            extra = message.additional_kwargs.get(key)
            if isinstance(extra, str) and extra:
                parts.append(extra)
    inline = split_think(message.text)[1]
    if inline:
        parts.append(inline)
    return "\n\n".join(parts)


def latest_turn(messages: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
    """The messages after the last human message whose text is non-empty.

    A thread with no such human message is one turn from the start.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, HumanMessage) and message.text.strip():
            return messages[index + 1 :]
    return messages


def final_answer(messages: Sequence[BaseMessage]) -> Answer:
    """The last AI message of the latest turn with non-empty answer text.

    Never the previous turn's answer: a turn whose answer is not written yet has none.
    """
    return final_answer_from_end(reversed(messages))


def final_answer_from_end(newest_first: Iterable[BaseMessage]) -> Answer:
    """``final_answer`` over messages given newest first, reading no further than needed.

    The first AI message with answer text met before a non-empty human message is the
    latest turn's answer; meeting that human message first means the turn has none.
    Messages of other kinds neither answer nor end a turn, so a lazy reader may omit them.
    """
    for message in newest_first:
        if isinstance(message, HumanMessage) and message.text.strip():
            return NO_ANSWER
        if isinstance(message, AIMessage):
            content = answer_text(message)
            if content.strip():
                return Answer(
                    content=content, reasoning=reasoning_text(message), message_id=message.id
                )
    return NO_ANSWER


def coerce_messages(raw: Iterable[Any]) -> list[BaseMessage]:
    """Message objects from a channel or API value that may hold dicts (JSON state).

    Entries that are not recognisable messages are dropped rather than failing the
    whole answer: one odd entry must not hide the assistant's text.
    """
    messages: list[BaseMessage] = []
    for item in raw:
        if isinstance(item, BaseMessage):
            messages.append(item)
            continue
        try:
            messages.extend(convert_to_messages([item]))
        except (ValueError, TypeError, NotImplementedError, KeyError):
            continue
    return messages
