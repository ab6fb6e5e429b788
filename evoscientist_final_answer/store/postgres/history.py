"""A DeltaChannel's history below a checkpoint, from the PostgreSQL checkpointer's tables.
Mirrors ``store/sqlite/history.py``; here the whole history is one statement
(``HISTORY_SQL``), one round trip.
"""

from __future__ import annotations

from typing import Any

import psycopg
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from evoscientist_final_answer.store import delta, lazy
from evoscientist_final_answer.store.decoding import check_whole_history, pruned_history
from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.lru import LruCache
from evoscientist_final_answer.store.messages import MESSAGES
from evoscientist_final_answer.store.postgres.blobs import blob_cursor, parse

# DeltaChannel snapshots kept decoded (id index included), by ``(thread, version)``:
# a blob at a version is never rewritten, so the next checkpoint of a growing thread
# reads only its newer writes.
Seeds = LruCache[tuple[str, str], delta.Seed]
KEPT_SNAPSHOTS = 4

# Whether checkpoint ``c`` holds a stored value of the channel, and at which version.
_SEED_PROBE = f"""
CROSS JOIN LATERAL (
  SELECT c.checkpoint -> 'channel_versions' ->> '{MESSAGES}' AS version,
         EXISTS (SELECT 1 FROM checkpoint_blobs b
                  WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = ''
                    AND b.channel = '{MESSAGES}' AND b.type <> 'empty'
                    AND b.version = c.checkpoint -> 'channel_versions' ->> '{MESSAGES}')
           AS seeded
) v"""
# A DeltaChannel's history below a checkpoint, in one round trip: the parent chain
# (``kind`` 'c', nearest first) up to the nearest ancestor holding a stored value of
# the channel, that value's blob (``kind`` 's') unless its version is among
# ``known`` (decoded copies kept), and the channel's writes against the chain
# (``kind`` 'w'). Each step is a primary-key lookup: the ``LIMIT``/``OFFSET`` keep
# every lateral subquery apart from its join, which on a table without statistics
# the planner would otherwise run as a scan of the thread's rows per step. The depth
# bound ends a loop.
HISTORY_SQL = f"""
WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, version, seeded, depth) AS (
  SELECT c.checkpoint_id, c.parent_checkpoint_id, v.version, v.seeded, 0
  FROM checkpoints c {_SEED_PROBE}
  WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = '' AND c.checkpoint_id = %(start)s
  UNION ALL
  SELECT c.checkpoint_id, c.parent_checkpoint_id, v.version, v.seeded, chain.depth + 1
  FROM chain CROSS JOIN LATERAL (
    SELECT p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint, p.thread_id
    FROM checkpoints p
    WHERE p.thread_id = %(thread_id)s AND p.checkpoint_ns = ''
      AND p.checkpoint_id = chain.parent_checkpoint_id
    LIMIT 1
  ) c {_SEED_PROBE}
  WHERE NOT chain.seeded AND chain.depth < %(max_depth)s
)
SELECT 'c' AS kind, checkpoint_id, parent_checkpoint_id AS parent, depth,
       version, seeded, NULL AS task_path, NULL AS task_id, NULL::int AS idx,
       NULL AS type, NULL::bytea AS blob
FROM chain
UNION ALL
SELECT 's', chain.checkpoint_id, NULL, chain.depth, chain.version, NULL, NULL, NULL, NULL,
       b.type, CASE WHEN octet_length(b.blob) <= %(inline_max)s THEN b.blob END
FROM chain CROSS JOIN LATERAL (
  SELECT b.type, b.blob FROM checkpoint_blobs b
  WHERE b.thread_id = %(thread_id)s AND b.checkpoint_ns = '' AND b.channel = '{MESSAGES}'
    AND b.version = chain.version
  LIMIT 1
) b
WHERE chain.seeded AND NOT (chain.version = ANY(%(known)s::text[]))
UNION ALL
SELECT 'w', chain.checkpoint_id, NULL, chain.depth, NULL, NULL, cw.task_path,
       cw.task_id, cw.idx, cw.type, cw.blob
FROM chain CROSS JOIN LATERAL (
  SELECT cw.task_path, cw.task_id::text, cw.idx, cw.type, cw.blob FROM checkpoint_writes cw
  WHERE cw.thread_id = %(thread_id)s AND cw.checkpoint_ns = ''
    AND cw.checkpoint_id = chain.checkpoint_id AND cw.channel = '{MESSAGES}'
  OFFSET 0
) cw
"""
MAX_CHAIN_DEPTH = 100_000
# Whether a checkpoint of the thread still names ``parent`` as its parent: a history
# read that found no row at ``parent`` tells a pruned parent from a thread deleted
# meanwhile by it (only then, so no index on the parent is needed).
STILL_NAMED_SQL = """
SELECT EXISTS (
  SELECT 1 FROM checkpoints
  WHERE thread_id = %(thread_id)s AND checkpoint_ns = '' AND parent_checkpoint_id = %(parent)s
) AS named
"""
# The last link of the parent chain from ``start`` up (without blobs): its parent is
# NULL when the chain reaches the thread's first checkpoint, an id when an ancestor is
# gone. For the full decode's check (``check_pruned``); the lazy one reads it from
# ``HISTORY_SQL``'s rows.
CHAIN_END_SQL = """
WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, depth) AS (
  SELECT c.checkpoint_id, c.parent_checkpoint_id, 0 FROM checkpoints c
  WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = '' AND c.checkpoint_id = %(start)s
  UNION ALL
  SELECT p.checkpoint_id, p.parent_checkpoint_id, chain.depth + 1
  FROM chain CROSS JOIN LATERAL (
    SELECT c.checkpoint_id, c.parent_checkpoint_id FROM checkpoints c
    WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = ''
      AND c.checkpoint_id = chain.parent_checkpoint_id
    LIMIT 1
  ) p
  WHERE chain.depth < %(max_depth)s
)
SELECT checkpoint_id, parent_checkpoint_id AS parent FROM chain ORDER BY depth DESC LIMIT 1
"""
# A snapshot larger than this stays on the server until the answer needs it: whether
# it holds the few ids the answer's last turn carries is asked there
# (``SEED_CHECK_SQL``: a scan of the bytes where they lie, against sending them all).
# Its size is known without reading it (``octet_length`` of a stored value).
INLINE_SNAPSHOT_BYTES = 1 << 20
# Ids looked up on the server at once (each is one scan of the snapshot there); more,
# or a second lookup in the same snapshot (a growing thread's next step), read it.
SERVER_CHECKED_IDS = 4
# Whether a snapshot's bytes contain any of the ids (a superset of its holding one):
# NULL when the row is gone.
SEED_CHECK_SQL = f"""
SELECT bool_or(position(n IN b.blob) > 0) AS found
FROM checkpoint_blobs b CROSS JOIN unnest(%(ids)s::bytea[]) n
WHERE b.thread_id = %(thread_id)s AND b.checkpoint_ns = '' AND b.channel = '{MESSAGES}'
  AND b.version = %(version)s
"""
SEED_SQL = f"""
SELECT b.type, b.blob FROM checkpoint_blobs b
WHERE b.thread_id = %(thread_id)s AND b.checkpoint_ns = '' AND b.channel = '{MESSAGES}'
  AND b.version = %(version)s
"""


class HistoryWalker:
    """The history reads of one reader, with the snapshots it keeps decoded.

    The parent chain from the checkpoint's parent up to the nearest checkpoint that stores
    a value of the channel (the seed), and the channel's writes against the chain, go to
    the shared fold (``delta.History.value``); the same chain tells the full decode whether
    langgraph rebuilt a history from part of it (``check_pruned``). Unlike SQLite, whether
    a checkpoint stores the value is told by its ``checkpoint_blobs`` row at the channel's
    version, snapshots are kept by version (a blob at a version is never rewritten), and a
    large snapshot is left on the server and asked there about the ids an answer reaches
    (``consult``)."""

    def __init__(self) -> None:
        self.seeds: Seeds = LruCache(KEPT_SNAPSHOTS)

    def forget(self) -> None:
        self.seeds.clear()

    async def walk(
        self, conn: psycopg.AsyncConnection[Any], thread_id: str, parent_id: str
    ) -> tuple[delta.History, str | None]:
        """The channel's history below the checkpoint whose parent is ``parent_id``:
        the nearest stored value up the chain, and every write since (the
        checkpoint's own excluded); and that stored value's version (None: no
        snapshot), which ``consult`` asks about. A large snapshot is not read here
        (``INLINE_SNAPSHOT_BYTES``)."""
        seeds = self.seeds
        known = [version for (thread, version) in seeds if thread == thread_id]
        params = {
            "thread_id": thread_id,
            "start": parent_id,
            "max_depth": MAX_CHAIN_DEPTH,
            "known": known,
            "inline_max": INLINE_SNAPSHOT_BYTES,
        }
        async with blob_cursor(conn) as cur:
            await cur.execute(HISTORY_SQL, params)
            rows = await cur.fetchall()
        chain = [row for row in rows if row["kind"] == "c"]
        if not chain:
            if await _still_named(conn, thread_id, parent_id):
                raise pruned_history(parent_id)  # the child is there, its parent is not
            raise StoreUnavailable(f"checkpoint {parent_id} vanished while reading")
        deepest = max(chain, key=lambda row: row["depth"])
        ended = not deepest["seeded"] and deepest["depth"] < MAX_CHAIN_DEPTH
        if ended and deepest["parent"] is not None:
            # The walk ended at a link with no row behind it, before any stored value:
            # one statement's snapshot, so not a deletion racing the read.
            raise pruned_history(deepest["parent"])
        depth_of: dict[str, int] = {}
        seed_version: str | None = None
        seed: delta.Seed | None = None
        writes: list[dict[str, Any]] = []
        for row in rows:
            kind = row["kind"]
            if kind == "c":
                depth_of[row["checkpoint_id"]] = row["depth"]
                if row["seeded"]:
                    seed_version = row["version"]
            elif kind == "s":
                if row["blob"] is None:  # large: consulted where it lies (``consult``)
                    seed = delta.Seed(None)
                else:
                    seed = delta.seed_of(parse(row["type"], row["blob"]))
                seeds.put((thread_id, row["version"]), seed)
            else:
                writes.append(row)
        if seed is None and seed_version is not None:
            seed = seeds.get((thread_id, seed_version))
            if seed is None:  # evicted between the query and now: read it again
                raise lazy.Unexpected("kept snapshot evicted during the read")
        history = delta.History(
            seed if seed is not None else delta.Seed([]),
            [
                delta.HistoryWrite(
                    depth_of[w["checkpoint_id"]],
                    w["task_path"] or "",
                    w["task_id"],
                    w["idx"],
                    w["type"],
                    w["blob"],
                )
                for w in writes
            ],
        )
        return history, seed_version


async def consult(
    conn: psycopg.AsyncConnection[Any],
    thread_id: str,
    version: str,
    seed: delta.Seed,
    need: delta.SeedNeeded,
) -> None:
    """Answer ``need`` for a snapshot left on the server: a scan there for a few ids
    (their bytes found nowhere in it: it holds none of them), else its bytes, read."""
    if need.ids and len(need.ids) <= SERVER_CHECKED_IDS and not seed.scanned:
        ids = sorted(need.ids)
        seed.scanned = True
        params = {"thread_id": thread_id, "version": version, "ids": [i.encode() for i in ids]}
        cur = await conn.execute(SEED_CHECK_SQL, params)
        found = (await cur.fetchone() or {}).get("found")
        if found is None:
            raise StoreUnavailable(f"snapshot {version} of {thread_id} vanished while reading")
        if not found:
            seed.mark_absent(ids)
            return
    seed.fill(await stored_value(conn, thread_id, version))


async def stored_value(conn: psycopg.AsyncConnection[Any], thread_id: str, version: str) -> Any:
    """The channel's value stored at ``version``, read whole and parsed (a blob at a
    version is written once)."""
    async with blob_cursor(conn) as cur:
        await cur.execute(SEED_SQL, {"thread_id": thread_id, "version": version})
        row = await cur.fetchone()
    if row is None:
        raise StoreUnavailable(f"messages of {thread_id} at {version} vanished while reading")
    return parse(row["type"], row["blob"])


async def _still_named(conn: psycopg.AsyncConnection[Any], thread_id: str, parent: str) -> bool:
    cur = await conn.execute(STILL_NAMED_SQL, {"thread_id": thread_id, "parent": parent})
    row = await cur.fetchone()
    return bool(row and row["named"])


async def check_pruned(saver: AsyncPostgresSaver, tup: CheckpointTuple) -> None:
    """The full decode's check (``saver_answer(check=...)``): a DeltaChannel checkpoint
    without the channel's value must have its whole history behind it."""
    await check_whole_history(saver, tup, _missing_ancestor)


async def _missing_ancestor(saver: AsyncPostgresSaver, thread_id: str, start: str) -> str | None:
    params = {"thread_id": thread_id, "start": start, "max_depth": MAX_CHAIN_DEPTH}
    cur = await saver.conn.execute(CHAIN_END_SQL, params)
    row = await cur.fetchone()
    return start if row is None else row["parent"]
