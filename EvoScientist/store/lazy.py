"""Decode a checkpoint without building its messages, then build only the ones needed.

A checkpoint blob is msgpack whose objects (messages, snapshots, sets…) are ext
records. Parsed with an ext hook that keeps each record as raw bytes, a 2,000-message
checkpoint costs one msgpack pass and no pydantic models; the answer then needs only
the newest few messages, built from the end with the serializer's own ext hook, so its
allowlist and fallbacks apply as in a full decode.

Anything this module does not recognise raises ``Unexpected``; the caller then falls
back to the saver's full decode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import ormsgpack
from langchain_core.messages import BaseMessage

from EvoScientist.answer.extract import coerce_messages

EXT_CONSTRUCTOR_KW_ARGS = 2
EXT_PYDANTIC_V1 = 4
EXT_PYDANTIC_V2 = 5
EXT_DELTA_SNAPSHOT = 7
_OBJECT_EXTS = (EXT_CONSTRUCTOR_KW_ARGS, EXT_PYDANTIC_V1, EXT_PYDANTIC_V2)
_UNPACK_OPTIONS = ormsgpack.OPT_NON_STR_KEYS

# Message types that can carry or close an answer; everything else is skipped unbuilt.
ANSWER_TYPES = frozenset({"human", "ai", "HumanMessageChunk", "AIMessageChunk"})
REMOVE_TYPE = "remove"

ExtHook = Callable[[int, bytes], Any]


class Unexpected(Exception):
    """A shape the lazy path does not handle; decode fully instead."""


def ext_hook(serde: object) -> ExtHook:
    """The serializer's own hook for ext records (langgraph's ``JsonPlusSerializer``),
    the one thing the lazy path borrows from it; ``Unexpected`` for a serializer
    without one (an encrypted one, say)."""
    hook = getattr(serde, "_unpack_ext_hook", None)
    if hook is None:
        raise Unexpected(f"serializer {type(serde).__name__} has no ext hook")
    return hook


class Ext(NamedTuple):
    """An ext record kept as bytes (the hook itself: ``Ext(code, data)``)."""

    code: int
    data: bytes


def parse(blob: bytes) -> Any:
    """msgpack → Python, every ext record left as an undecoded ``Ext``."""
    return ormsgpack.unpackb(blob, ext_hook=Ext, option=_UNPACK_OPTIONS)


def materialize(value: Any, hook: ExtHook) -> Any:
    """Decode the ``Ext`` records inside ``value`` as the serializer would have."""
    if isinstance(value, Ext):
        return hook(value.code, value.data)
    if isinstance(value, list):
        return [materialize(item, hook) for item in value]
    if isinstance(value, dict):
        return {key: materialize(item, hook) for key, item in value.items()}
    return value


def _payload(ext: Ext) -> list[Any]:
    payload = ormsgpack.unpackb(ext.data, ext_hook=Ext, option=_UNPACK_OPTIONS)
    if not isinstance(payload, list) or len(payload) < 3 or not isinstance(payload[2], dict):
        raise Unexpected(f"ext {ext.code} payload is not [module, name, fields, ...]")
    return payload


class LazyMessage:
    """One entry of a messages value: an ext record, or a plain dict/str from JSON input."""

    __slots__ = ("_kind", "_peeked", "item")

    def __init__(self, item: Any) -> None:
        if isinstance(item, Ext) and item.code not in _OBJECT_EXTS:
            raise Unexpected(f"ext code {item.code} in a messages value")
        self.item = item
        self._peeked = False
        self._kind: tuple[str | None, str | None] = (None, None)

    def peek(self) -> tuple[str | None, str | None]:
        """``(type, id)`` without building the message."""
        if not self._peeked:
            self._kind = self._read_kind()
            self._peeked = True
        return self._kind

    def _read_kind(self) -> tuple[str | None, str | None]:
        if isinstance(self.item, Ext):
            payload = _payload(self.item)
            if payload[1] == "Overwrite":
                raise Unexpected("Overwrite inside a messages value")
            fields = payload[2]
            return fields.get("type"), fields.get("id")
        if isinstance(self.item, dict):
            kind = self.item.get("type") or self.item.get("role")
            return (str(kind) if kind is not None else None), self.item.get("id")
        return None, None

    def build(self, hook: ExtHook) -> BaseMessage | None:
        value = hook(self.item.code, self.item.data) if isinstance(self.item, Ext) else self.item
        built = coerce_messages([value])
        return built[0] if built else None


def messages_value(value: Any) -> list[Any]:
    """The entries of a stored messages value (a list, or a DeltaChannel snapshot of
    one), still raw: each becomes a ``LazyMessage`` only when something looks at it."""
    if isinstance(value, Ext) and value.code == EXT_DELTA_SNAPSHOT:
        value = parse(value.data)
    if not isinstance(value, list):
        raise Unexpected(f"messages value is {type(value).__name__}, not a list")
    return value


def entry(item: Any) -> LazyMessage:
    return item if isinstance(item, LazyMessage) else LazyMessage(item)


def write_entries(value: Any) -> list[LazyMessage]:
    """The messages one write adds: a list of them, or a single one."""
    is_object = isinstance(value, Ext) and value.code == EXT_CONSTRUCTOR_KW_ARGS
    if is_object and _payload(value)[1] == "Overwrite":
        raise Unexpected("Overwrite write")
    items = value if isinstance(value, list) else [value]
    return [LazyMessage(item) for item in items]


class Seed:
    """A DeltaChannel snapshot's entries, with their id index built on first need and
    kept: a growing thread reuses one snapshot for up to ``snapshot_frequency`` steps.

    ``raw``: the snapshot's packed bytes, when known. Every message's id is packed in
    them as the value of an ``"id"`` key, so one scan of the bytes for such values
    (``packed_ids``: a superset, tool-call ids included) tells which ids the snapshot
    cannot hold: a replay whose writes only add new messages (every ordinary step) then
    needs no index, and a cold first read parses none of the snapshot's thousands of
    entries unless the answer reaches back into them (``Joined``).
    """

    __slots__ = ("_entries", "_index", "_packed_ids", "raw")

    def __init__(self, entries: Sequence[Any] | None, raw: bytes | None = None) -> None:
        if entries is None and raw is None:
            raise ValueError("a seed needs its entries or its packed bytes")
        self._entries = None if entries is None else list(entries)
        self.raw = raw
        self._index: dict[str, int] | None = None
        self._packed_ids: frozenset[bytes] | None = None

    @property
    def entries(self) -> list[Any]:
        if self._entries is None:
            assert self.raw is not None
            self._entries = messages_value(parse(self.raw))
        return self._entries

    def index(self) -> dict[str, int]:
        if self._index is None:
            index: dict[str, int] = {}
            for position, item in enumerate(self.entries):
                wrapped = self.entries[position] = entry(item)
                entry_id = wrapped.peek()[1]
                if entry_id is not None:
                    index[entry_id] = position
            self._index = index
        return self._index

    def position(self, entry_id: Any) -> int | None:
        """Where the snapshot holds ``entry_id``, without indexing it when its bytes
        prove the id is not there."""
        if self._index is None and self.raw is not None and isinstance(entry_id, str):
            if self._packed_ids is None:
                self._packed_ids = packed_ids(self.raw)
            try:
                if entry_id.encode() not in self._packed_ids:
                    return None
            except UnicodeEncodeError:
                pass
        return self.index().get(entry_id)


# An ``"id"`` key (a fixstr) and its string value's header: fixstr, str8, str16, str32.
_ID_FIELD = re.compile(rb"\xa2id(?:([\xa0-\xbf])|\xd9(.)|\xda(..)|\xdb(....))", re.DOTALL)


def packed_ids(raw: bytes) -> frozenset[bytes]:
    """Every string packed in ``raw`` as the value of an ``"id"`` key, at any depth
    (ext payloads are embedded verbatim): one pass of a byte scan, nothing built."""
    found: set[bytes] = set()
    for match in _ID_FIELD.finditer(raw):
        fix, str8, str16, str32 = match.groups()
        size = fix[0] - 0xA0 if fix else int.from_bytes(str8 or str16 or str32, "big")
        start = match.end()
        found.add(raw[start : start + size])
    return frozenset(found)


def seed_of(value: Any) -> Seed:
    """A stored messages value as a ``Seed``: a DeltaChannel snapshot is kept as its
    bytes, its entries parsed on first need."""
    if isinstance(value, Ext) and value.code == EXT_DELTA_SNAPSHOT:
        return Seed(None, value.data)
    return Seed(messages_value(value))


class Joined(Sequence[Any]):
    """A snapshot's entries followed by the entries the writes appended, the snapshot
    parsed only when something reaches back into it (newest first, an answer is
    usually found among the appended ones)."""

    def __init__(self, seed: Seed, tail: list[Any]) -> None:
        self.seed = seed
        self.tail = tail

    def __reversed__(self) -> Iterator[Any]:
        yield from reversed(self.tail)
        yield from reversed(self.seed.entries)

    def __iter__(self) -> Iterator[Any]:
        yield from self.seed.entries
        yield from self.tail

    def __len__(self) -> int:
        return len(self.seed.entries) + len(self.tail)

    def __getitem__(self, index: Any) -> Any:
        return list(self)[index]


def replay(seed: Seed | Sequence[Any], writes: Iterable[Sequence[LazyMessage]]) -> Sequence[Any]:
    """``_messages_delta_reducer``'s fold over lazy entries: same ids replace in place,
    ``RemoveMessage`` deletes, entries without an id append.

    Seed entries are peeked only when a write carries an id the snapshot may hold, and
    parsed only when that happens or the caller reaches back into them.
    """
    if not isinstance(seed, Seed):
        seed = Seed(seed)
    flat = [entry for batch in writes for entry in batch]
    if not any(
        entry_id is not None and seed.position(entry_id) is not None
        for _, entry_id in (entry.peek() for entry in flat)
    ):
        return Joined(seed, _fold(flat))  # every write appends, or undoes its own
    # Ids the writes placed or removed (None: removed); the snapshot answers the rest.
    moved: dict[Any, int | None] = {}
    result: list[Any] = list(seed.entries)
    for entry in flat:
        kind, entry_id = entry.peek()
        if entry_id is None:
            result.append(entry)
            continue
        at = moved[entry_id] if entry_id in moved else seed.position(entry_id)
        if kind == REMOVE_TYPE:
            if at is not None:
                result[at] = None
                moved[entry_id] = None
        elif at is not None:
            result[at] = entry
        else:
            moved[entry_id] = len(result)
            result.append(entry)
    return [entry for entry in result if entry is not None]


def _fold(entries: list[LazyMessage]) -> list[Any]:
    """The reducer's fold of writes that touch no snapshot entry, among themselves."""
    result: list[Any] = []
    index: dict[Any, int] = {}
    for entry in entries:
        kind, entry_id = entry.peek()
        if entry_id is None:
            result.append(entry)
        elif kind == REMOVE_TYPE:
            if entry_id in index:
                result[index.pop(entry_id)] = None
        elif entry_id in index:
            result[index[entry_id]] = entry
        else:
            index[entry_id] = len(result)
            result.append(entry)
    return [entry for entry in result if entry is not None]


def newest_first(entries: Sequence[Any], hook: ExtHook) -> Iterator[BaseMessage]:
    """Build, newest first, only the entries that can answer or close a turn."""
    for item in reversed(entries):
        current = entry(item)
        kind, _ = current.peek()
        if kind is not None and kind not in ANSWER_TYPES and kind not in ("user", "assistant"):
            continue
        message = current.build(hook)
        if message is not None:
            yield message
