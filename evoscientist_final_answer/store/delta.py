"""A DeltaChannel's value from its snapshot and the writes since, folded lazily: a read
parses the snapshot only when an id it reaches may be there, not thousands of entries
to read the newest few.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from langgraph.checkpoint.base import writes_sort_key

from evoscientist_final_answer.store import lazy
from evoscientist_final_answer.store.lazy import (
    EXT_DELTA_SNAPSHOT,
    REMOVE_TYPE,
    Ext,
    LazyMessage,
    PartNeeded,
    messages_value,
    parse,
)


class SeedNeeded(PartNeeded):
    """A snapshot held elsewhere (not read yet) must answer: whether it holds ``ids``,
    or (``ids`` None) its entries. The caller finds out (``Seed.mark_absent``, or
    ``Seed.raw`` set) and asks again; no message was built from a wrong fold."""

    def __init__(self, ids: frozenset[str] | None) -> None:
        super().__init__(f"snapshot needed for ids {sorted(ids)!r}" if ids else "snapshot needed")
        self.ids = ids


# At most this many ids are looked up by one scan of a snapshot's bytes for exactly
# them; more (or a second lookup on the same snapshot, a growing thread's next step)
# index every id it packs at once (``packed_ids``).
TARGETED_IDS = 8


class Seed:
    """A DeltaChannel snapshot's entries, parsed and indexed by id only on need and
    kept: a growing thread reuses one snapshot for up to ``snapshot_frequency`` steps.

    ``raw``: the snapshot's packed bytes, when read. Every message's id is packed in
    them as the value of an ``"id"`` key, so a scan of the bytes for that value tells
    whether the snapshot can hold an id (a superset: tool-call ids match too) without
    parsing its thousands of entries. Neither entries nor bytes: the snapshot is not
    read yet (a large PostgreSQL blob); a question only it answers raises
    ``SeedNeeded``.
    """

    __slots__ = ("_absent", "_entries", "_index", "_packed_ids", "raw", "scanned")

    def __init__(
        self, entries: Sequence[Any] | None, raw: bytes | memoryview | None = None
    ) -> None:
        self._entries = None if entries is None else list(entries)
        self.raw = raw
        self._index: dict[str, int] | None = None
        self._packed_ids: frozenset[bytes] | None = None
        self._absent: set[str] = set()  # ids known not to be in the snapshot
        self.scanned = False  # one targeted scan done (the next indexes every id)

    @property
    def entries(self) -> list[Any]:
        if self._entries is None:
            if self.raw is None:
                raise SeedNeeded(None)
            self._entries = messages_value(parse(self.raw))
        return self._entries

    def index(self) -> dict[str, int]:
        if self._index is None:
            index: dict[str, int] = {}
            for position, item in enumerate(self.entries):
                wrapped = self.entries[position] = lazy.entry(item)
                entry_id = wrapped.peek()[1]
                if entry_id is not None:
                    index[entry_id] = position
            self._index = index
        return self._index

    def position(self, entry_id: Any) -> int | None:
        """Where the snapshot holds ``entry_id`` (it is parsed and indexed)."""
        return self.index().get(entry_id)

    def fill(self, value: Any) -> None:
        """The snapshot's stored value, read at last (as ``seed_of`` takes it)."""
        if isinstance(value, Ext) and value.code == EXT_DELTA_SNAPSHOT:
            self.raw = value.data
        else:
            self._entries = messages_value(value)

    def mark_absent(self, ids: Iterable[str]) -> None:
        """Ids found elsewhere (a server-side scan of the same bytes) not to be held."""
        self._absent.update(ids)

    def absent(self, ids: Sequence[Any], also: Sequence[Any] = ()) -> bool:
        """Whether the snapshot holds none of ``ids`` (False: it may hold one). A scan
        of its bytes looks ``also`` up too, for later questions; a snapshot not read
        yet is asked about ``ids`` alone (``SeedNeeded``)."""
        unknown = [i for i in ids if not (isinstance(i, str) and i in self._absent)]
        if not unknown:
            return True
        if self._index is not None or (self.raw is None and self._entries is not None):
            index = self.index()
            return not any(i in index for i in unknown)
        if not all(isinstance(i, str) for i in unknown):
            return False  # only a str id is found by its bytes
        if self.raw is None:
            raise SeedNeeded(frozenset(unknown))
        more = [i for i in also if isinstance(i, str) and i not in self._absent]
        targets = list(dict.fromkeys([*unknown, *more]))
        try:
            packed = {i: i.encode() for i in targets}
        except UnicodeEncodeError:
            return False
        if self._packed_ids is None and (self.scanned or len(packed) > TARGETED_IDS):
            self._packed_ids = packed_ids(self.raw)
        if self._packed_ids is not None:
            held = {v for v in packed.values() if v in self._packed_ids}
        else:
            self.scanned = True
            held = packed_among(self.raw, list(packed.values()))
        self._absent.update(i for i, v in packed.items() if v not in held)
        return not any(packed[i] in held for i in unknown)


# An ``"id"`` key (a fixstr) and its string value's header: fixstr, str8, str16, str32.
_ID_FIELD = re.compile(rb"\xa2id(?:([\xa0-\xbf])|\xd9(.)|\xda(..)|\xdb(....))", re.DOTALL)


def packed_ids(raw: bytes | memoryview) -> frozenset[bytes]:
    """Every string packed in ``raw`` as the value of an ``"id"`` key, at any depth
    (ext payloads are embedded verbatim): one pass of a byte scan, nothing built."""
    found: set[bytes] = set()
    for match in _ID_FIELD.finditer(raw):
        fix, str8, str16, str32 = match.groups()
        size = fix[0] - 0xA0 if fix else int.from_bytes(str8 or str16 or str32, "big")
        start = match.end()
        found.add(bytes(raw[start : start + size]))
    return frozenset(found)


def _str_headers(size: int) -> list[bytes]:
    """Every msgpack str header that announces ``size`` bytes."""
    headers = [b"\xdb" + size.to_bytes(4, "big")]
    if size < 1 << 16:
        headers.append(b"\xda" + size.to_bytes(2, "big"))
    if size < 1 << 8:
        headers.append(b"\xd9" + bytes([size]))
    if size < 32:
        headers.append(bytes([0xA0 + size]))
    return headers


def packed_among(raw: bytes | memoryview, ids: list[bytes]) -> set[bytes]:
    """Which of ``ids`` ``packed_ids(raw)`` would hold, in one scan for exactly them
    (an ``"id"`` key, a header announcing the id's length, the id), nothing built.
    Each match consumes only the key, so no packed id is skipped over."""
    if not ids:
        return set()
    options = b"|".join(
        b"(?:" + b"|".join(re.escape(h) for h in _str_headers(len(v))) + b")(" + re.escape(v) + b")"
        for v in ids
    )
    pattern = re.compile(rb"\xa2id(?=" + options + rb")", re.DOTALL)
    return {ids[match.lastindex - 1] for match in pattern.finditer(raw) if match.lastindex}


def seed_of(value: Any) -> Seed:
    """A stored messages value as a ``Seed``: a DeltaChannel snapshot is kept as its
    bytes, its entries parsed on first need."""
    if isinstance(value, Ext) and value.code == EXT_DELTA_SNAPSHOT:
        return Seed(None, value.data)
    return Seed(messages_value(value))


HUMAN_TYPES = frozenset({"human", "HumanMessageChunk", "user"})


class Joined(Sequence[Any]):
    """The channel's value after the writes: the snapshot's entries, then what the
    writes appended, each snapshot entry as the writes left it.

    Read newest first (all an answer needs): a write whose id the snapshot holds
    replaces or removes a snapshot entry in place (until it is removed; added again
    after that, it appends); every other write folds as among themselves. So the
    value ends with the writes' own fold (``_fold``) less some entries whose ids the
    snapshot holds, and the fold's last entries, as long as the snapshot holds none
    of their ids, are the value's last entries. Each is yielded once the snapshot is
    known not to hold its id (one scan of its bytes per turn of entries); at the first
    it may hold, the exact fold (``_exact``) takes over at the same place. The
    snapshot is parsed only if the reader reaches back into it or a write touches it.
    """

    def __init__(self, seed: Seed, writes: list[LazyMessage]) -> None:
        self.seed = seed
        self.writes = writes
        self.tail = _fold(writes)
        self._value: list[Any] | None = None

    def value(self) -> list[Any]:
        """The whole value, exactly as the reducer folds it."""
        if self._value is None:
            ids = [i for _, i in (w.peek() for w in self.writes) if i is not None]
            if self.seed.absent(ids):
                self._value = [*self.seed.entries, *self.tail]
            else:
                self._value = _exact(self.seed, self.writes)
        return self._value

    def __reversed__(self) -> Iterator[Any]:
        tail = self.tail
        end = len(tail)  # tail[end:] yielded: the value's own last entries
        while end > 0:
            start = end - 1  # back to the turn's human message, or the first entry
            while start > 0 and tail[start].peek()[0] not in HUMAN_TYPES:
                start -= 1
            batch = [e.peek()[1] for e in reversed(tail[start:end])]
            for at in range(end - 1, start - 1, -1):
                entry_id = tail[at].peek()[1]
                if entry_id is not None and not self.seed.absent([entry_id], also=batch):
                    value = self.value()  # the exact fold, from the same place on
                    yield from reversed(value[: len(value) - (len(tail) - at - 1)])
                    return
                yield tail[at]
            end = start
        value = self.value()  # every appended entry is the value's own
        yield from reversed(value[: len(value) - len(tail)])

    def __iter__(self) -> Iterator[Any]:
        return iter(self.value())

    def __len__(self) -> int:
        return len(self.value())

    def __getitem__(self, index: Any) -> Any:
        return self.value()[index]


class HistoryWrite(NamedTuple):
    """One write of the channel below a checkpoint, as a backend read it."""

    depth: int  # how far up the parent chain its checkpoint is (0: the parent)
    task_path: str
    task_id: str
    idx: int
    type: str
    blob: bytes | memoryview


class History(NamedTuple):
    """A DeltaChannel's history below a checkpoint, as a backend read it: the nearest
    stored value up the parent chain (``Seed([])`` when the chain reaches the thread's
    first checkpoint without one) and the channel's writes since, in any order."""

    seed: Seed
    writes: list[HistoryWrite]

    def value(self) -> Sequence[Any]:
        """The channel's value at the checkpoint: the writes, oldest checkpoint first
        and within one in the order live execution applied them (``writes_sort_key``,
        as langgraph's own history replays them), folded over the seed."""
        ordered = sorted(
            self.writes,
            key=lambda w: (-w.depth, writes_sort_key(w.task_path, w.task_id, w.idx)),
        )
        return replay(
            self.seed, [lazy.write_entries(lazy.parse_typed(w.type, w.blob)) for w in ordered]
        )


def replay(seed: Seed | Sequence[Any], writes: Iterable[Sequence[LazyMessage]]) -> Sequence[Any]:
    """``_messages_delta_reducer``'s fold over lazy entries: same ids replace in place,
    ``RemoveMessage`` deletes, entries without an id append (``Joined``: folded as far
    as the reader looks)."""
    if not isinstance(seed, Seed):
        seed = Seed(seed)
    return Joined(seed, [item for batch in writes for item in batch])


def _exact(seed: Seed, flat: list[LazyMessage]) -> list[Any]:
    """The reducer's fold of writes over the snapshot's indexed entries."""
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
