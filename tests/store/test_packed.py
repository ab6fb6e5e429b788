"""``packed.locate`` finds a value's bytes where a full parse puts it, for every
msgpack type a checkpoint can hold, and refuses what is not msgpack."""

from __future__ import annotations

import ormsgpack
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from evoscientist_final_answer.store import lazy, packed

VALUES = {
    "ints": [0, 1, 127, 128, 255, 256, 65535, 65536, 2**32, 2**63 - 1, -1, -32, -33, -(2**63)],
    "floats": [0.5, -1e300],
    "flags": [None, True, False],
    "strings": ["", "x" * 31, "y" * 32, "z" * 255, "w" * 256, "v" * 70_000],
    "bytes": [b"", b"b" * 300, b"c" * 70_000],
    "nested": {"a": {"b": [1, {"c": "d"}]}, "wide": {str(i): i for i in range(20)}},
    "long": list(range(70_000)),
    "channel_values": {
        "todo": 3,
        "messages": _DeltaSnapshot([HumanMessage("q", id="h"), AIMessage("a" * 300, id="a")]),
    },
}


def test_every_value_is_located_where_the_parse_puts_it() -> None:
    blob = JsonPlusSerializer().dumps_typed(VALUES)[1]
    parsed = lazy.parse(blob)
    assert packed.skip(blob, 0) == len(blob)
    for key in VALUES:
        span = packed.locate(blob, key)
        assert span is not None
        assert lazy.parse(blob[span[0] : span[1]]) == parsed[key], key
    span = packed.locate(blob, "channel_values", "messages")
    assert span is not None
    ext = packed.ext_span(blob, span[0])
    snapshot = parsed["channel_values"]["messages"]
    assert ext is not None and ext[0] == lazy.EXT_DELTA_SNAPSHOT == snapshot.code
    assert blob[ext[1] : ext[2]] == snapshot.data
    assert packed.locate(blob, "channel_values", "absent") is None
    assert packed.ext_span(blob, packed.locate(blob, "ints")[0]) is None  # type: ignore[index]


@pytest.mark.parametrize(
    "blob",
    [b"", b"\xc1", ormsgpack.packb({"a": "x" * 40})[:-5], ormsgpack.packb([1, 2])],
    ids=["empty", "never-used-byte", "truncated", "not-a-map"],
)
def test_what_is_not_a_map_of_msgpack_is_unexpected(blob: bytes) -> None:
    with pytest.raises(lazy.Unexpected):
        packed.locate(blob, "a")
