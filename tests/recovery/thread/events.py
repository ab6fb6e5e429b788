"""v2 thread-stream events as langgraph-api 0.16.7 sends them, for the pure tests: a
run's root lifecycle (ids naming the run), an AI message's start, text and end."""

from __future__ import annotations

from typing import Any


class Wire:
    """Numbers events as one connection of the server does (``seq``, ``event_id``)."""

    def __init__(self) -> None:
        self.seq = 0

    def event(
        self,
        method: str,
        data: dict[str, Any],
        event_id: str | None = None,
        namespace: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        self.seq += 1
        return {
            "type": "event",
            "event_id": event_id or f"1796610992{self.seq:03d}-0",
            "seq": self.seq,
            "method": method,
            "params": {"namespace": list(namespace), "timestamp": 0, "data": data},
        }

    def lifecycle(self, run_id: str, phase: str, **data: Any) -> dict[str, Any]:
        return self.event("lifecycle", {"event": phase, **data}, f"synth:{run_id}:lc||{phase}")

    def message(
        self, message_id: str, *chunks: str, finish: bool = True, index: int = 1
    ) -> list[dict[str, Any]]:
        """An AI message: its reasoning block, then ``chunks`` of text in block ``index``."""
        events = [
            self.event("messages", {"event": "message-start", "role": "ai", "id": message_id}),
            self.event(
                "messages",
                {
                    "event": "content-block-start",
                    "index": 0,
                    "content": {"type": "reasoning", "reasoning": ""},
                },
            ),
            self.event(
                "messages",
                {
                    "event": "content-block-delta",
                    "index": 0,
                    "delta": {"type": "reasoning-delta", "reasoning": "hmm"},
                },
            ),
            self.event(
                "messages",
                {
                    "event": "content-block-start",
                    "index": index,
                    "content": {"type": "text", "text": ""},
                },
            ),
        ]
        events += [
            self.event(
                "messages",
                {
                    "event": "content-block-delta",
                    "index": index,
                    "delta": {"type": "text-delta", "text": chunk},
                },
            )
            for chunk in chunks
        ]
        if finish:
            text = "".join(chunks)
            events += [
                self.event(
                    "messages",
                    {
                        "event": "content-block-finish",
                        "index": index,
                        "content": {"type": "text", "text": text},
                    },
                ),
                self.event("messages", {"event": "message-finish"}),
            ]
        return events


def shown_text(events: list[dict[str, Any]]) -> str:
    """The root text a consumer building its answer from the events shows."""
    return "".join(
        e["params"]["data"]["delta"]["text"]
        for e in events
        if e["method"] == "messages"
        and not e["params"]["namespace"]
        and e["params"]["data"].get("event") == "content-block-delta"
        and e["params"]["data"]["delta"].get("type") == "text-delta"
    )
