"""Where a value lies in a msgpack document, found without parsing the document: a
megabytes-long snapshot is kept as a view of the row's own bytes instead of copied.
Anything malformed raises ``lazy.Unexpected`` (the caller parses instead).
"""

from __future__ import annotations

from evoscientist_final_answer.store.lazy import Unexpected

# Header byte -> (bytes of its length field, fixed bytes after the header): for
# length-prefixed str/bin/ext (ext: +1 for its type byte) and fixed-size scalars.
_SIZED = {
    0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0),  # bin
    0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),  # ext
    0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0),  # str
    0xCA: (0, 4), 0xCB: (0, 8),  # float
    0xCC: (0, 1), 0xCD: (0, 2), 0xCE: (0, 4), 0xCF: (0, 8),  # uint
    0xD0: (0, 1), 0xD1: (0, 2), 0xD2: (0, 4), 0xD3: (0, 8),  # int
    0xD4: (0, 2), 0xD5: (0, 3), 0xD6: (0, 5), 0xD7: (0, 9), 0xD8: (0, 17),  # fixext
}  # fmt: skip
# Header byte -> (bytes of its count field, items per count): arrays and maps.
_CONTAINERS = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}
_EXT = (0xC7, 0xC8, 0xC9)


def _number(raw: bytes | memoryview, at: int, size: int) -> int:
    if at + size > len(raw):
        raise Unexpected("msgpack header past the end")
    return int.from_bytes(raw[at : at + size], "big")


def _header(raw: bytes | memoryview, at: int) -> tuple[int, int, int]:
    """(where the value's body starts, its body's size in bytes, items it contains)."""
    if at >= len(raw):
        raise Unexpected("msgpack value past the end")
    byte = raw[at]
    if byte <= 0x7F or byte >= 0xE0 or byte in (0xC0, 0xC2, 0xC3):
        return at + 1, 0, 0
    if byte <= 0x8F:
        return at + 1, 0, 2 * (byte & 0x0F)
    if byte <= 0x9F:
        return at + 1, 0, byte & 0x0F
    if byte <= 0xBF:
        return at + 1, byte & 0x1F, 0
    if byte in _CONTAINERS:
        size, per = _CONTAINERS[byte]
        return at + 1 + size, 0, per * _number(raw, at + 1, size)
    if byte in _SIZED:
        size, fixed = _SIZED[byte]
        length = _number(raw, at + 1, size) if size else 0
        return at + 1 + size, fixed + length, 0
    raise Unexpected(f"msgpack byte {byte:#x}")


def skip(raw: bytes | memoryview, at: int) -> int:
    """Where the value starting at ``at`` ends."""
    pending = 1
    while pending:
        pending -= 1
        body, size, items = _header(raw, at)
        at = body + size
        pending += items
    if at > len(raw):
        raise Unexpected("msgpack value past the end")
    return at


def locate(raw: bytes | memoryview, *keys: str) -> tuple[int, int] | None:
    """The span of the value at ``keys`` (a path of map keys), or None when a map on
    the way lacks its key."""
    start, end = 0, skip(raw, 0)
    for key in keys:
        wanted = key.encode()
        byte = raw[start]
        if not (0x80 <= byte <= 0x8F or byte in (0xDE, 0xDF)):
            raise Unexpected("msgpack path through a value that is not a map")
        at, _, items = _header(raw, start)
        for _ in range(items // 2):
            key_body, key_size, _ = _header(raw, at)
            value_at = key_body + key_size
            value_end = skip(raw, value_at)
            is_str = raw[at] in (0xD9, 0xDA, 0xDB) or 0xA0 <= raw[at] <= 0xBF
            if is_str and raw[key_body:value_at] == wanted:
                start, end = value_at, value_end
                break
            at = value_end
        else:
            return None
    return start, end


def ext_span(raw: bytes | memoryview, start: int) -> tuple[int, int, int] | None:
    """(code, data start, data end) of the ext record at ``start`` (ext8/16/32), or
    None for any other value."""
    byte = raw[start]
    if byte not in _EXT:
        return None
    body, size, _ = _header(raw, start)
    return raw[body], body + 1, body + size
