"""Decode only what answers, from the PostgreSQL checkpointer's tables.

``AsyncPostgresSaver.aget_tuple`` loads every channel's blob and builds every message
(and its DeltaChannel history replays every write into message objects). An answer
needs far less: the ``messages`` blob at the checkpoint's own version, the channels
that decide the run's status (``branch:to:*``, ``join:*``, ``__start__``,
``__pregel_tasks``, all small), and the ``__error__``/``__interrupt__``/``__resume__``
writes. For a DeltaChannel checkpoint: the parent chain up to the nearest stored
value, that value's blob (unless a decoded copy is kept) and the message writes since.
Blobs are parsed as in ``EvoScientist.store.lazy`` and only the newest messages that
decide the answer are built, with the saver's own serializer hook.

Anything this module does not recognise raises ``lazy.Unexpected``; the reader then
falls back to the saver's full decode (``tests/test_lazy_decoding.py`` holds the two
against each other on every checkpoint of real threads).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from langgraph.checkpoint.base import writes_sort_key
from langgraph.checkpoint.serde.base import SerializerProtocol

from EvoScientist.answer.result import FinalAnswer, answer_from_checkpoint
from EvoScientist.answer.status import (
    BRANCH_PREFIX,
    ERROR_CHANNEL,
    INTERRUPT_CHANNEL,
    JOIN_PREFIX,
    RESUME_CHANNEL,
    START_CHANNEL,
    TASKS_CHANNEL,
)
from EvoScientist.store import lazy
from EvoScientist.store.errors import StoreUnavailable
from EvoScientist.store.lru import LruCache
from EvoScientist.store.messages import MESSAGES, is_delta_channel

# Channels whose value can decide the status (``EvoScientist.answer.status``).
_STATUS_CHANNELS = f"""(v.key IN ('{START_CHANNEL}', '{TASKS_CHANNEL}')
       OR starts_with(v.key, '{BRANCH_PREFIX}') OR starts_with(v.key, '{JOIN_PREFIX}'))"""
# The checkpoint row, the ``messages`` blob at the version it names and the status
# channels' blobs (``checkpoint_blobs``' primary key), and the writes that decide the
# status: one round trip. The large blob is a column of its own: put in an array (as
# the saver's own SELECT does) it would be copied once more on the server.
CHECKPOINT_COLUMNS = f"""
SELECT c.checkpoint, c.metadata, c.parent_checkpoint_id, m.type AS messages_type,
  m.blob AS messages,
  (SELECT array_agg(array[bl.channel::bytea, bl.type::bytea, bl.blob])
     FROM jsonb_each_text(c.checkpoint -> 'channel_versions') v
     JOIN checkpoint_blobs bl
       ON bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns
      AND bl.channel = v.key AND bl.version = v.value
    WHERE {_STATUS_CHANNELS}) AS blobs,
  (SELECT array_agg(array[cw.task_id::text::bytea, cw.channel::bytea, cw.type::bytea,
                          cw.blob, convert_to(cw.task_path, 'UTF8'), cw.idx::text::bytea])
     FROM checkpoint_writes cw
    WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns
      AND cw.checkpoint_id = c.checkpoint_id
      AND cw.channel IN ('{ERROR_CHANNEL}', '{INTERRUPT_CHANNEL}', '{RESUME_CHANNEL}'))
    AS status_writes
FROM checkpoints c
LEFT JOIN LATERAL (
  SELECT bl.type, bl.blob FROM checkpoint_blobs bl
  WHERE bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns
    AND bl.channel = '{MESSAGES}'
    AND bl.version = c.checkpoint -> 'channel_versions' ->> '{MESSAGES}'
) m ON true
WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = '' AND c.checkpoint_id = {{checkpoint_id}}
"""
CHECKPOINT_SQL = CHECKPOINT_COLUMNS.format(checkpoint_id="%(checkpoint_id)s")


def with_checkpoint_row(head_sql: str) -> str:
    """``head_sql`` (one row: ``kind``, ``checkpoint_id``, ``writes``, ``version``) with
    its checkpoint's ``CHECKPOINT_SQL`` columns, in one statement: a thread's first read
    then costs one round trip, not two."""
    row = CHECKPOINT_COLUMNS.format(checkpoint_id="h.checkpoint_id")
    return f"WITH h AS ({head_sql}) SELECT h.*, d.* FROM h CROSS JOIN LATERAL ({row}) d"


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
       b.type, b.blob
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
# DeltaChannel snapshots kept decoded (id index included), by ``(thread, version)``:
# a blob at a version is never rewritten, so the next checkpoint of a growing thread
# reads only its newer writes.
KEPT_SNAPSHOTS = 4


class LazyDecoder:
    """The lazy decode of one reader, with the snapshots it keeps decoded."""

    def __init__(self) -> None:
        self.seeds: LruCache[tuple[str, str], lazy.Seed] = LruCache(KEPT_SNAPSHOTS)

    def forget(self) -> None:
        self.seeds.clear()

    async def answer(
        self,
        conn: psycopg.AsyncConnection[Any],
        serde: SerializerProtocol,
        thread_id: str,
        checkpoint_id: str,
        row: dict[str, Any] | None = None,
    ) -> FinalAnswer:
        """``row``: the checkpoint's ``CHECKPOINT_SQL`` columns, when already read."""
        hook = lazy.ext_hook(serde)
        if row is None:
            async with conn.cursor(binary=True) as cur:
                await cur.execute(
                    CHECKPOINT_SQL, {"thread_id": thread_id, "checkpoint_id": checkpoint_id}
                )
                row = await cur.fetchone()
        if row is None:
            raise StoreUnavailable(f"checkpoint {checkpoint_id} vanished while reading")
        checkpoint, metadata = row["checkpoint"], row["metadata"] or {}
        parent_id = row["parent_checkpoint_id"]
        if not isinstance(checkpoint, dict) or not isinstance(metadata, dict):
            raise lazy.Unexpected("checkpoint or metadata is not a JSON object")
        inline = checkpoint.get("channel_values") or {}
        channel_values: dict[str, Any] = {k: v for k, v in inline.items() if k != MESSAGES}
        for channel, type_, blob in row["blobs"] or []:
            if type_ != b"empty":
                channel_values[channel.decode()] = lazy.materialize(_parse(type_, blob), hook)
        stored_messages: Any = None
        if row["messages_type"] not in (None, "empty"):
            stored_messages = _parse(row["messages_type"], row["messages"])
        pending_writes = [
            (task_id.decode(), channel.decode(), serde.loads_typed((type_.decode(), blob)))
            for task_id, channel, type_, blob, _, _ in sorted(
                row["status_writes"] or [],
                key=lambda w: writes_sort_key(w[4].decode(), w[0].decode(), int(w[5])),
            )
        ]
        if stored_messages is not None:
            entries = lazy.messages_value(stored_messages)
        elif is_delta_channel(metadata) and parent_id:
            entries = await self._delta_entries(conn, thread_id, parent_id)
        else:
            entries = []
        return answer_from_checkpoint(
            thread_id=thread_id,
            newest_first=lazy.newest_first(entries, hook),
            channel_values=channel_values,
            pending_writes=pending_writes,
            metadata=metadata,
            checkpoint_id=checkpoint_id,
            ts=checkpoint.get("ts"),
            source="checkpointer",
            parent_checkpoint_id=parent_id,
        )

    async def _delta_entries(
        self, conn: psycopg.AsyncConnection[Any], thread_id: str, parent_id: str
    ) -> Sequence[Any]:
        """The channel's value at the checkpoint whose parent is ``parent_id``: the
        nearest stored value up the chain, then every write since (the checkpoint's own
        excluded), folded as the channel's reducer would."""
        known = [version for (thread, version) in self.seeds if thread == thread_id]
        params = {
            "thread_id": thread_id,
            "start": parent_id,
            "max_depth": MAX_CHAIN_DEPTH,
            "known": known,
        }
        async with conn.cursor(binary=True) as cur:
            await cur.execute(HISTORY_SQL, params)
            rows = await cur.fetchall()
        if not any(row["kind"] == "c" for row in rows):
            raise StoreUnavailable(f"checkpoint {parent_id} vanished while reading")
        depth_of: dict[str, int] = {}
        seed_version: str | None = None
        seed: lazy.Seed | None = None
        writes: list[dict[str, Any]] = []
        for row in rows:
            kind = row["kind"]
            if kind == "c":
                depth_of[row["checkpoint_id"]] = row["depth"]
                if row["seeded"]:
                    seed_version = row["version"]
            elif kind == "s":
                parsed = _parse(row["type"], row["blob"])
                seed = lazy.seed_of(parsed)
                self.seeds.put((thread_id, row["version"]), seed)
            else:
                writes.append(row)
        if seed is None and seed_version is not None:
            seed = self.seeds.get((thread_id, seed_version))
            if seed is None:  # evicted between the query and now: read it again
                raise lazy.Unexpected("kept snapshot evicted during the read")
        # Oldest checkpoint first; within one, the order live execution applied them.
        writes.sort(
            key=lambda w: (
                -depth_of[w["checkpoint_id"]],
                writes_sort_key(w["task_path"] or "", w["task_id"], w["idx"]),
            )
        )
        batches = [lazy.write_entries(_parse(w["type"], w["blob"])) for w in writes]
        return lazy.replay(seed if seed is not None else lazy.Seed([]), batches)


def _parse(type_: str | bytes, blob: bytes | None) -> Any:
    kind = type_.decode() if isinstance(type_, bytes) else type_
    if kind != "msgpack" or blob is None:
        raise lazy.Unexpected(f"{kind!r} blob")
    try:
        return lazy.parse(blob)
    except Exception as exc:  # ormsgpack raises its own error types
        raise lazy.Unexpected(f"unparseable blob: {exc}") from exc
