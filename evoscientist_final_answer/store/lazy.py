"""Decode a checkpoint without building its messages, then build only the newest ones the
answer needs, with the serializer's own ext hook (its allowlist and fallbacks apply).
Anything not recognised raises ``Unexpected``: the caller falls back to the full decode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import ormsgpack
from langchain_core.messages import BaseMessage

from evoscientist_final_answer.answer.extract import coerce_messages

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


class PartNeeded(Exception):
    """The decode reached a part the backend has not fetched yet (a snapshot left on
    the server, a value known only by its end): the backend fetches it, and the decode
    runs again. Raised before any message is built from what was missing."""


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


def parse_typed(kind: str, blob: bytes | memoryview | None) -> Any:
    """A stored ``(type, blob)`` pair parsed as ``parse`` does; ``Unexpected`` for any
    type but msgpack (the saver's full decode knows the others) and for bytes msgpack
    does not accept."""
    if kind != "msgpack" or blob is None:
        raise Unexpected(f"{kind!r} blob")
    try:
        return parse(blob)
    except Exception as exc:  # ormsgpack raises its own error types
        raise Unexpected(f"unparseable blob: {exc}") from exc


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
