"""F1's bookkeeping: the answer text a stream has shown so far, and whether it ended well."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessageChunk

from evoscientist_final_answer.answer.extract import answer_text

TERMINAL_EVENTS = frozenset({"end", "error"})
AI_CHUNK_TYPES = frozenset({"AIMessageChunk", "ai"})


def _chunk(data: dict[str, Any]) -> AIMessageChunk:
    return AIMessageChunk(content=data.get("content") or "", id=data.get("id"))


@dataclass
class StreamText:
    """Accumulates ``messages-tuple`` token chunks into the text a UI would show.

    langgraph-api sends ``error`` when a run fails but no terminal event when it succeeds,
    so only ``end``/``error`` prove an ending; any other close is treated as a possible
    truncation and reconciled with the route."""

    run_id: str | None = None
    terminal_event: str | None = None
    error: Any = None
    events: int = 0
    _messages: dict[str, AIMessageChunk] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)

    def feed(self, event: str, data: Any) -> bool:
        """Take one SSE event; True when the shown text changed."""
        self.events += 1
        if event == "metadata" and isinstance(data, dict):
            self.run_id = data.get("run_id", self.run_id)
        elif event in TERMINAL_EVENTS:
            self.terminal_event = event
            if event == "error":
                self.error = data
        elif event.split("|")[0] == "messages" and isinstance(data, list | tuple) and data:
            return self._feed_message(data[0])
        return False

    def _feed_message(self, message: Any) -> bool:
        if not isinstance(message, dict) or message.get("type") not in AI_CHUNK_TYPES:
            return False
        key = str(message.get("id") or len(self._order))
        before = self.text
        chunk = _chunk(message)
        if key in self._messages and message.get("type") == "AIMessageChunk":
            self._messages[key] = self._messages[key] + chunk
        else:  # a whole message replaces whatever chunks came before it
            if key not in self._messages:
                self._order.append(key)
            self._messages[key] = chunk
        return self.text != before

    @property
    def text(self) -> str:
        """The newest AI message with answer text, as ``answer_text`` sees it."""
        for key in reversed(self._order):
            text = answer_text(self._messages[key])
            if text.strip():
                return text
        return ""
