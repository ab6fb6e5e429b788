"""A large messages value's newest entries, proven from its last step's writes, so
PostgreSQL need send only the blob's first and last bytes, not thousands of messages.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from evoscientist_final_answer.store import lazy, packed
from evoscientist_final_answer.store.lazy import LazyMessage

# Enough of a value's first bytes for its array header (array32: 5 bytes).
HEAD_BYTES = 5


class WholeNeeded(lazy.PartNeeded):
    """The step's entries did not decide the answer: read the whole value."""


@dataclass(frozen=True)
class StoredEnd:
    """What the server sent of a stored value and of its parent's."""

    head: bytes  # the value's first bytes
    size: int  # its size in bytes
    tail: bytes  # its last bytes (as many as the step's writes hold)
    parent_head: bytes | None  # None: the parent held no value
    parent_size: int


def array_header(head: bytes) -> tuple[int, int] | None:
    """(entries, header bytes) of the msgpack array ``head`` starts, or None."""
    if not head:
        return None
    byte = head[0]
    if 0x90 <= byte <= 0x9F:
        return byte & 0x0F, 1
    width = {0xDC: 2, 0xDD: 4}.get(byte)
    if width is None or len(head) < 1 + width:
        return None
    return int.from_bytes(head[1 : 1 + width], "big"), 1 + width


def entry_bytes(blob: bytes | memoryview) -> list[bytes]:
    """The packed entries one write adds: a list's items, or the single value."""
    header = array_header(bytes(blob[:HEAD_BYTES]))
    if header is None:
        bounds = [0, packed.skip(blob, 0)]
    else:
        count, start = header
        bounds = [start]
        for _ in range(count):
            bounds.append(packed.skip(blob, bounds[-1]))
    if bounds[-1] != len(blob):
        raise lazy.Unexpected("bytes after a write's value")
    return [bytes(blob[start:end]) for start, end in pairwise(bounds)]


def newest_entries(end: StoredEnd, writes: Sequence[bytes | memoryview]) -> list[bytes] | None:
    """The value's last entries as packed bytes, oldest first (the step's writes' own),
    or None when that cannot be proven.

    The step that made the version wrote them (its writes, stored against the parent
    checkpoint, are small), and the value ends with exactly those entries when its entry
    count is the parent value's plus theirs (none replaced or removed), its size is the
    parent value's plus their bytes (array headers apart), and its last bytes are theirs,
    in order. Each entry is a self-delimiting msgpack value, so equal bytes from an entry's
    start to the end are the same entries. A value the reducer made any other way (a fork
    that ran the step again, a message given its id by the reducer, a write of dicts)
    fails one of these and is read whole."""
    value = array_header(end.head)
    if value is None:
        return None
    if end.parent_head is None:
        parent_count, parent_body = 0, 0
    else:
        parent = array_header(end.parent_head)
        if parent is None:
            return None
        parent_count, parent_body = parent[0], end.parent_size - parent[1]
    try:
        entries = [item for blob in writes for item in entry_bytes(blob)]
    except lazy.Unexpected:
        return None
    count, header_size = value
    written = b"".join(entries)
    if not entries or count != parent_count + len(entries):
        return None
    if end.size != header_size + parent_body + len(written) or not end.tail.endswith(written):
        return None
    if any(packed.ext_span(item, 0) is None for item in entries):
        return None  # a message written as a dict is stored as the reducer made it
    return entries


class Newest(Sequence[Any]):
    """A value known only by its newest entries: read newest first as far as they go;
    reaching past them, or asking for all of it, raises ``WholeNeeded``."""

    def __init__(self, entries: Sequence[bytes]) -> None:
        self.entries = [LazyMessage(lazy.parse(item)) for item in entries]

    def __reversed__(self) -> Iterator[Any]:
        yield from reversed(self.entries)
        raise WholeNeeded

    def __iter__(self) -> Iterator[Any]:
        raise WholeNeeded

    def __len__(self) -> int:
        raise WholeNeeded

    def __getitem__(self, index: Any) -> Any:
        raise WholeNeeded
