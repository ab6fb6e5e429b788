"""F1 bookkeeping: what a UI shows from ``messages-tuple`` events."""

from __future__ import annotations

from evoscientist_final_answer.recovery.stream_text import StreamText


def chunk(text: str, *, kind: str = "text", msg_id: str = "m1") -> list[dict]:
    block = {"type": kind, kind: text, "index": 0 if kind == "reasoning" else 1}
    return [
        {"type": "AIMessageChunk", "id": msg_id, "content": [block]},
        {"langgraph_node": "agent"},
    ]


def test_tokens_accumulate_without_reasoning() -> None:
    stream = StreamText()
    stream.feed("metadata", {"run_id": "r1", "attempt": 1})
    for token in ("Let ", "me ", "think."):
        stream.feed("messages", chunk(token, kind="reasoning"))
    assert stream.text == ""
    for token in ("The ", "answer."):
        assert stream.feed("messages", chunk(token)) is True
    assert stream.text == "The answer."
    assert stream.run_id == "r1"
    assert stream.terminal_event is None


def test_newest_message_with_text_is_shown() -> None:
    stream = StreamText()
    stream.feed("messages", chunk("first", msg_id="a"))
    stream.feed("messages", [{"type": "tool", "id": "t", "content": "tool output"}, {}])
    stream.feed("messages", chunk("second", msg_id="b"))
    assert stream.text == "second"


def test_leading_think_tags_are_not_shown() -> None:
    stream = StreamText()
    for token in ("<think>", "hmm", "</think>", "Shown"):
        stream.feed("messages", [{"type": "AIMessageChunk", "id": "x", "content": token}, {}])
    assert stream.text == "Shown"


def test_terminal_events_are_recorded() -> None:
    stream = StreamText()
    stream.feed("error", {"error": "ValueError", "message": "boom"})
    assert stream.terminal_event == "error"
    assert stream.error == {"error": "ValueError", "message": "boom"}
    ended = StreamText()
    ended.feed("end", None)
    assert ended.terminal_event == "end"


def test_non_message_events_change_nothing() -> None:
    stream = StreamText()
    assert stream.feed("values", {"messages": []}) is False
    assert stream.feed("messages", []) is False
    assert stream.text == ""
