"""A DeltaChannel's history below a checkpoint, from ``sessions.db``'s tables. Mirrors
``store/postgres/history.py``; here the walk runs on aiosqlite's thread and the seed is
found in the ancestors' own blobs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from evoscientist_final_answer.store import delta, lazy, packed
from evoscientist_final_answer.store.decoding import check_whole_history, pruned_history
from evoscientist_final_answer.store.lru import LruCache
from evoscientist_final_answer.store.messages import MESSAGES
from evoscientist_final_answer.store.sqlite.connection import fetch, in_one_trip

# The parent chain without blobs (cheap: no overflow pages read). Ids are ordered only
# within one process, so the chain follows parent links. CROSS JOIN keeps the chain as
# the outer loop: one primary-key lookup per step. The depth bound ends a chain that
# INSERT OR REPLACE turned into a loop.
_CHAIN_IDS_CTE = """
WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, depth) AS (
  SELECT checkpoint_id, parent_checkpoint_id, 0 FROM checkpoints
  WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?
  UNION ALL
  SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1
  FROM chain CROSS JOIN checkpoints c ON c.checkpoint_id = chain.parent_checkpoint_id
  WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND chain.depth < ?
)
"""
# Ancestors nearest first, each with its blob. The blob is joined to the chain, not
# carried through it: a recursive step copies its row into SQLite's queue, and a
# DeltaChannel snapshot's megabytes copied so cost a first read several times more
# than reading them.
ANCESTORS_SQL = (
    _CHAIN_IDS_CTE
    + """
SELECT chain.checkpoint_id, chain.parent_checkpoint_id, c.type, c.checkpoint
FROM chain CROSS JOIN checkpoints c
WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND c.checkpoint_id = chain.checkpoint_id
"""
)
# Its last parent link: NULL when it reaches the thread's first checkpoint, an id when
# an ancestor was deleted (pruned history).
CHAIN_END_SQL = (
    _CHAIN_IDS_CTE
    + "SELECT checkpoint_id, parent_checkpoint_id FROM chain ORDER BY depth DESC LIMIT 1"
)
# Its ids nearest first: to find a snapshot already decoded.
ANCESTOR_IDS_SQL = _CHAIN_IDS_CTE + "SELECT checkpoint_id FROM chain"
BLOBS_SQL = """
SELECT checkpoint_id, type, checkpoint FROM checkpoints
WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id IN ({ids})
"""
MESSAGE_WRITES_SQL = """
SELECT checkpoint_id, {task_path}, task_id, idx, type, value FROM writes
WHERE thread_id = ? AND checkpoint_ns = '' AND channel = ? AND checkpoint_id IN ({ids})
"""

MAX_CHAIN_DEPTH = 100_000
# How far back, in checkpoints, a read looks for a snapshot (or first checkpoint) it
# kept, in one query: a poll re-reading a growing thread walks all its steps since.
ID_BATCH = 1024
# DeltaChannel snapshots kept decoded (id index included) so the next checkpoint of a
# growing thread replays only its writes.
KEPT_SNAPSHOTS = 4
# Threads whose first checkpoint (no stored value above it), or whose nearest snapshot,
# is remembered (ids only).
KNOWN_ROOTS = 4096
# A checkpoint blob this large is walked to its snapshot, not parsed (``_stored_seed``).
LOCATE_BYTES = 1 << 20


class HistoryWalker:
    """The history walks of one reader, with the snapshots it keeps decoded.

    The parent chain up to the nearest checkpoint that stores a value of the channel (the
    seed), and the channel's writes against it, go to the shared fold
    (``delta.History.value``); the same chain tells the full decode whether langgraph
    rebuilt a history from part of it (``check_pruned``). SQLite keeps a checkpoint's
    channel values in its own blob, so the seed is found by parsing, or for a large
    snapshot locating, the ancestors' blobs (``_stored_seed``); a read that knows the
    thread's root or nearest snapshot walks ids only and reads the blobs and writes it needs
    in the same trip (``_near_known``)."""

    def __init__(self) -> None:
        self.seeds: LruCache[tuple[str, str], delta.Seed] = LruCache(KEPT_SNAPSHOTS)
        # Threads whose walk reached their first checkpoint without meeting a stored
        # value (every thread younger than its first snapshot): that root, whose value
        # before its own writes is empty. A later read walks ids to it, not blobs.
        self.roots: LruCache[str, str] = LruCache(KNOWN_ROOTS)
        # Each thread's nearest snapshot met so far, by id: a hundred threads polled at
        # once outnumber the snapshots kept decoded, and without this each read of an
        # evicted one walked its ancestors' blobs again, several trips at a time. The
        # id lets a read fetch that snapshot's blob in the same trip as the rest.
        self.snapshots: LruCache[str, str] = LruCache(KNOWN_ROOTS)

    def forget(self) -> None:
        self.seeds.clear()
        self.roots.clear()
        self.snapshots.clear()

    def _keep_seed(self, thread_id: str, checkpoint_id: str, seed: delta.Seed) -> None:
        self.seeds.put((thread_id, checkpoint_id), seed)
        self.snapshots.put(thread_id, checkpoint_id)

    async def walk(self, saver: AsyncSqliteSaver, thread_id: str, parent_id: str) -> delta.History:
        """The channel's history below the checkpoint whose parent is ``parent_id``:
        the nearest stored value up the parent chain, and every write since (the
        checkpoint's own excluded)."""
        task_path = "task_path" if saver._has_task_path else "''"
        known = await self._known_seed(saver, thread_id, parent_id, task_path)
        if known is not None:
            chain, seed, rows = known
        else:
            chain, seed = await self._walk_to_seed(saver, thread_id, parent_id)
            rows = await fetch(saver, _writes_sql(task_path, chain), (thread_id, MESSAGES, *chain))
        depth_of = {checkpoint_id: depth for depth, checkpoint_id in enumerate(chain)}
        writes = [
            delta.HistoryWrite(depth_of[checkpoint_id], path, task_id, idx, type_, value)
            for checkpoint_id, path, task_id, idx, type_, value in rows
        ]
        return delta.History(seed, writes)

    async def _walk_to_seed(
        self, saver: AsyncSqliteSaver, thread_id: str, parent_id: str
    ) -> tuple[list[str], delta.Seed]:
        """Ancestors nearest first, blobs parsed as they come, up to the nearest one
        holding the channel's value (the seed); that snapshot is kept decoded."""
        chain: list[str] = []
        seed: delta.Seed | None = None
        missing: str | None = parent_id  # the first link with no row behind it
        looped = False
        async with (
            saver.lock,
            saver.conn.execute(
                ANCESTORS_SQL, (thread_id, parent_id, thread_id, MAX_CHAIN_DEPTH, thread_id)
            ) as cur,
        ):
            async for ancestor_id, ancestor_parent, type_, blob in cur:
                if ancestor_id in chain:
                    missing, looped = None, True
                    break  # a loop: the walk has seen everything it can
                chain.append(ancestor_id)
                missing = ancestor_parent
                seed = _stored_seed(type_, blob)
                if seed is not None:
                    self._keep_seed(thread_id, ancestor_id, seed)
                    break
        if seed is None:
            if missing is not None and len(chain) < MAX_CHAIN_DEPTH + 1:
                raise pruned_history(missing)
            seed = delta.Seed([])
            if missing is None and not looped and chain:
                self.roots.put(thread_id, chain[-1])
        return chain, seed

    async def _known_seed(
        self, saver: AsyncSqliteSaver, thread_id: str, parent_id: str, task_path: str
    ) -> tuple[list[str], delta.Seed, list[Any]] | None:
        """The chain up to a snapshot met on an earlier read (or up to the thread's first
        checkpoint), if the walk meets it before any newer snapshot, with the message
        writes along it: then only the small blobs in between are read (and that
        snapshot's, when it is no longer kept decoded), all of it in one trip
        (``_near_known``)."""
        root = self.roots.get(thread_id)
        decoded = {key[1] for key in self.seeds if key[0] == thread_id}
        if root is not None:
            decoded.add(root)
        kept = set(decoded)
        snapshot = self.snapshots.get(thread_id)
        if snapshot is not None:
            kept.add(snapshot)
        if not kept:
            return None
        near = await in_one_trip(saver, _near_known(thread_id, parent_id, kept, decoded, task_path))
        if near is None:
            return None
        chain, blob_rows, write_rows = near
        blobs = {checkpoint_id: (type_, blob) for checkpoint_id, type_, blob in blob_rows}
        stop = chain[-1]
        seed = self.seeds.get((thread_id, stop))
        if seed is None and stop == root:
            seed = delta.Seed([])
        if seed is None and stop in blobs:
            seed = _stored_seed(*blobs[stop])
            if seed is not None:
                self._keep_seed(thread_id, stop, seed)
        if seed is None:
            return None  # forgotten or changed meanwhile: walk the slow way
        for depth, checkpoint_id in enumerate(chain[:-1]):
            if checkpoint_id not in blobs:
                return None  # changed under us: walk the slow way
            newer = _stored_seed(*blobs[checkpoint_id])
            if newer is not None:  # a newer snapshot than the one kept
                self._keep_seed(thread_id, checkpoint_id, newer)
                chain = chain[: depth + 1]
                seed = newer
                break
        ids = set(chain)
        return chain, seed, [row for row in write_rows if row[0] in ids]


def _writes_sql(task_path: str, chain: Sequence[str]) -> str:
    return MESSAGE_WRITES_SQL.format(task_path=task_path, ids=",".join("?" * len(chain)))


def _near_known(
    thread_id: str, parent_id: str, kept: set[str], decoded: set[str], task_path: str
) -> Callable[[sqlite3.Connection], tuple[list[str], list[Any], list[Any]] | None]:
    """On aiosqlite's thread: the nearest ancestor ids up to the first one in ``kept``
    (None when it is not within ``ID_BATCH`` or the chain loops), the blobs in between
    (and that one's, unless it is ``decoded``) and the message writes of the whole
    stretch. A newer snapshot among those blobs (rare) shortens the stretch
    afterwards; its older writes are then dropped."""

    def read(conn: sqlite3.Connection) -> tuple[list[str], list[Any], list[Any]] | None:
        ids = conn.execute(ANCESTOR_IDS_SQL, (thread_id, parent_id, thread_id, ID_BATCH))
        chain: list[str] = []
        seen: set[str] = set()
        for (ancestor_id,) in ids:
            if ancestor_id in seen:
                return None
            chain.append(ancestor_id)
            seen.add(ancestor_id)
            if ancestor_id in kept:
                break
        else:
            return None
        between = chain[:-1] if chain[-1] in decoded else chain
        blobs = (
            conn.execute(
                BLOBS_SQL.format(ids=",".join("?" * len(between))), (thread_id, *between)
            ).fetchall()
            if between
            else []
        )
        writes = conn.execute(_writes_sql(task_path, chain), (thread_id, MESSAGES, *chain))
        return chain, blobs, writes.fetchall()

    return read


async def check_pruned(saver: AsyncSqliteSaver, tup: CheckpointTuple) -> None:
    """The full decode's check (``saver_answer(check=...)``): a DeltaChannel checkpoint
    without the channel's value must have its whole history behind it."""
    await check_whole_history(saver, tup, _missing_ancestor)


async def _missing_ancestor(saver: AsyncSqliteSaver, thread_id: str, parent_id: str) -> str | None:
    rows = await fetch(saver, CHAIN_END_SQL, (thread_id, parent_id, thread_id, MAX_CHAIN_DEPTH))
    return rows[0][1] if rows else parent_id


def _stored_seed(type_: str, blob: bytes) -> delta.Seed | None:
    """The channel's value a checkpoint stores, as a ``Seed`` (None: it stores none).
    A large DeltaChannel snapshot is kept as a view of the row's own bytes
    (``packed``): the megabytes are not copied again."""
    if type_ == "msgpack" and len(blob) >= LOCATE_BYTES:
        try:
            span = packed.locate(blob, "channel_values", MESSAGES)
            if span is None:
                return None
            ext = packed.ext_span(blob, span[0])
        except lazy.Unexpected:
            ext = None  # parsed below, which tells what is wrong
        if ext is not None and ext[0] == lazy.EXT_DELTA_SNAPSHOT:
            return delta.Seed(None, memoryview(blob)[ext[1] : ext[2]])
    values = lazy.parse_typed(type_, blob).get("channel_values") or {}
    return delta.seed_of(values[MESSAGES]) if MESSAGES in values else None
