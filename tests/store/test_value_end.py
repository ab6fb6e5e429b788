"""``value_end`` proves a stored value's newest entries from its step's writes only
when the reducer's value really ends with them: values made by langgraph's own
``add_messages`` and serializer, each way a step can leave them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph.message import add_messages

from evoscientist_final_answer.store import lazy, value_end
from evoscientist_final_answer.store.value_end import HEAD_BYTES, StoredEnd

SERDE = JsonPlusSerializer()
HISTORY = [
    HumanMessage("question", id="h1"),
    AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "c1"}], id="a1"),
    ToolMessage("result " * 40, tool_call_id="c1", id="t1"),
]


def packed(value: Any) -> bytes:
    return SERDE.dumps_typed(value)[1]


def stored_end(
    parent: list | None, stored_writes: list[bytes], value: list
) -> tuple[StoredEnd, list[bytes]]:
    """What the server sends of ``value`` (its first bytes, its size, as many last bytes
    as the writes hold) and of its parent; and the writes."""
    blob = packed(value)
    tail_size = sum(len(w) for w in stored_writes)
    parent_blob = None if parent is None else packed(parent)
    end = StoredEnd(
        head=blob[:HEAD_BYTES],
        size=len(blob),
        tail=blob[len(blob) - min(tail_size, len(blob)) :],
        parent_head=None if parent_blob is None else parent_blob[:HEAD_BYTES],
        parent_size=0 if parent_blob is None else len(parent_blob),
    )
    return end, stored_writes


def step(parent: list | None, *writes: Any) -> list[bytes] | None:
    """``newest_entries`` for the value langgraph's reducer makes of ``writes``."""
    stored = [packed(write) for write in writes]  # as the task's writes, before the reducer
    value = list(parent or [])
    for write in writes:
        value = add_messages(value, write)
    end, stored = stored_end(parent, stored, value)
    return value_end.newest_entries(end, stored)


def ids(entries: list[bytes]) -> list[str | None]:
    return [lazy.LazyMessage(lazy.parse(item)).peek()[1] for item in entries]


def test_an_appended_answer_is_the_values_end() -> None:
    answer = AIMessage("the answer", id="a2")
    entries = step(HISTORY, [answer])
    assert entries is not None and ids(entries) == ["a2"]


def test_a_single_message_write_and_several_writes_in_the_steps_order() -> None:
    assert ids(step(HISTORY, AIMessage("one", id="x")) or []) == ["x"]
    first, second = [ToolMessage("r", tool_call_id="c", id="t2")], [AIMessage("ok", id="a3")]
    assert ids(step(HISTORY, first, second) or []) == ["t2", "a3"]


def test_writes_out_of_the_steps_order_prove_nothing() -> None:
    first, second = [ToolMessage("r", tool_call_id="c", id="t2")], [AIMessage("ok", id="a3")]
    value = add_messages(add_messages(HISTORY, first), second)
    end, stored = stored_end(HISTORY, [packed(first), packed(second)], value)
    assert value_end.newest_entries(end, list(reversed(stored))) is None


def test_a_parent_without_a_value() -> None:
    assert ids(step(None, [HumanMessage("hi", id="h"), AIMessage("yo", id="a")]) or []) == [
        "h",
        "a",
    ]


@pytest.mark.parametrize(
    "write",
    [
        [AIMessage("edited", id="a1")],  # replaces an entry in place
        [RemoveMessage(id="t1"), AIMessage("new", id="a9")],  # removes one, appends one
        [AIMessage("no id yet")],  # the reducer gives it an id the write lacks
        [{"role": "assistant", "content": "a dict", "id": "d1"}],  # stored as a message
        [],  # nothing appended
    ],
    ids=["replace", "remove", "id-by-reducer", "dict", "empty"],
)
def test_a_value_the_step_did_not_just_append_to_is_not_proven(write: list) -> None:
    assert step(HISTORY, write) is None


def test_a_value_made_by_another_run_of_the_step_is_not_proven() -> None:
    """A fork ran the step again from the same parent: the stored writes are the other
    run's (same count, same sizes, other bytes)."""
    value = add_messages(HISTORY, [AIMessage("answer A", id="a2")])
    other_writes = [packed([AIMessage("answer B", id="a2")])]
    end, _ = stored_end(HISTORY, other_writes, value)
    assert value_end.newest_entries(end, other_writes) is None


def test_a_value_larger_than_the_parent_and_writes_is_not_proven() -> None:
    """Same count and same last bytes, but the value's earlier entries are not the
    parent's: its size gives it away."""
    parent = HISTORY
    other_parent = [*HISTORY[:2], ToolMessage("longer result " * 40, tool_call_id="c1", id="t1")]
    write = [AIMessage("answer", id="a2")]
    value = add_messages(other_parent, write)
    end, stored = stored_end(parent, [packed(write)], value)
    assert value_end.newest_entries(end, stored) is None


def test_reading_past_the_proven_entries_asks_for_the_whole_value() -> None:
    entries = step(HISTORY, [ToolMessage("r", tool_call_id="c", id="t2")])
    assert entries is not None
    newest = value_end.Newest(entries)
    seen = reversed(newest)
    assert next(seen).peek()[1] == "t2"
    with pytest.raises(value_end.WholeNeeded):
        next(seen)
    with pytest.raises(value_end.WholeNeeded):
        len(newest)


def test_a_value_whose_count_is_not_the_parents_plus_the_writes_is_not_proven() -> None:
    """Sizes and last bytes agree, the entry count does not (an entry replaced by one
    of the same size, another appended): not proven."""
    write = [AIMessage("answer", id="a2")]
    stored = [packed(write)]
    end, _ = stored_end(HISTORY, stored, add_messages(HISTORY, write))
    assert value_end.newest_entries(end, stored) is not None
    one_more = bytes([end.head[0] + 1]) + end.head[1:]  # a fixarray header, one more entry
    assert value_end.newest_entries(replace(end, head=one_more), stored) is None


def test_a_write_is_split_into_its_entries_or_refused() -> None:
    one, two = AIMessage("a", id="1"), AIMessage("b", id="2")
    assert value_end.entry_bytes(packed([one, two])) == [packed(one), packed(two)]
    assert value_end.entry_bytes(packed(one)) == [packed(one)]
    assert value_end.entry_bytes(packed([])) == []
    with pytest.raises(lazy.Unexpected):
        value_end.entry_bytes(packed([one]) + b"\xc0")  # bytes after the value
