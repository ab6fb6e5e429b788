"""Decode only what answers, from the PostgreSQL checkpointer's tables.

``AsyncPostgresSaver.aget_tuple`` loads every channel's blob and builds every message
(and its DeltaChannel history replays every write into message objects). An answer
needs far less: the ``messages`` blob at the checkpoint's own version (a large one
only as far as its last step's writes prove what it ends with, ``value_end``), the channels
that decide the run's status (``branch:to:*``, ``join:*``, ``__start__``,
``__pregel_tasks``, all small), and the ``__error__``/``__interrupt__``/``__resume__``
writes. For a DeltaChannel checkpoint: the parent chain up to the nearest stored
value, the message writes since, and that value's blob unless it is kept or large: a
large snapshot stays on the server, which is asked whether it holds the ids of the
entries the answer reaches (``EvoScientist.store.delta``), and is read only when it
may. Blobs are parsed as in ``EvoScientist.store.lazy``, where libpq received them
(``BlobView``), and only the newest messages that decide the answer are built, with
the saver's own serializer hook.

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
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg.pq import Format

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
from EvoScientist.store import delta, lazy, value_end
from EvoScientist.store.errors import StoreUnavailable
from EvoScientist.store.lru import LruCache
from EvoScientist.store.messages import MESSAGES, is_delta_channel

# Channels whose value can decide the status (``EvoScientist.answer.status``).
_STATUS_CHANNELS = f"""(v.key IN ('{START_CHANNEL}', '{TASKS_CHANNEL}')
       OR starts_with(v.key, '{BRANCH_PREFIX}') OR starts_with(v.key, '{JOIN_PREFIX}'))"""
# The checkpoint row, the ``messages`` blob at the version it names and the status
# channels' blobs (``checkpoint_blobs``' primary key), and the writes that decide the
# status: one round trip. The large blob is a column of its own: put in an array (as
# the saver's own SELECT does) it would be copied once more on the server. A blob over
# ``whole_max`` bytes is not sent: its first bytes, its size and as many of its last
# bytes as the step that made it wrote (those writes, against the parent checkpoint,
# and the parent's value's first bytes and size come too) prove what it ends with
# (``EvoScientist.store.value_end``).
CHECKPOINT_COLUMNS = f"""
SELECT c.checkpoint, c.metadata, c.parent_checkpoint_id, m.type AS messages_type,
  CASE WHEN m.size <= %(whole_max)s THEN m.blob END AS messages,
  m.size AS messages_size,
  CASE WHEN m.size > %(whole_max)s THEN substring(m.blob FROM 1 FOR {value_end.HEAD_BYTES})
  END AS messages_head,
  CASE WHEN s.size BETWEEN 1 AND m.size THEN substring(m.blob FROM (m.size - s.size + 1)::int)
  END AS messages_tail,
  s.writes AS step_writes, p.type AS parent_type, p.size AS parent_size, p.head AS parent_head,
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
  SELECT bl.type, bl.blob, octet_length(bl.blob) AS size FROM checkpoint_blobs bl
  WHERE bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns
    AND bl.channel = '{MESSAGES}'
    AND bl.version = c.checkpoint -> 'channel_versions' ->> '{MESSAGES}'
) m ON true
LEFT JOIN LATERAL (
  SELECT array_agg(array[cw.task_id::text::bytea, convert_to(cw.task_path, 'UTF8'),
                         cw.idx::text::bytea, cw.type::bytea, cw.blob]) AS writes,
         sum(octet_length(cw.blob)) AS size
  FROM checkpoint_writes cw
  WHERE m.size > %(whole_max)s AND cw.thread_id = c.thread_id
    AND cw.checkpoint_ns = c.checkpoint_ns AND cw.checkpoint_id = c.parent_checkpoint_id
    AND cw.channel = '{MESSAGES}'
) s ON true
LEFT JOIN LATERAL (
  SELECT pb.type, octet_length(pb.blob) AS size,
         substring(pb.blob FROM 1 FOR {value_end.HEAD_BYTES}) AS head
  FROM checkpoints pc JOIN checkpoint_blobs pb
    ON pb.thread_id = pc.thread_id AND pb.checkpoint_ns = pc.checkpoint_ns
   AND pb.channel = '{MESSAGES}'
   AND pb.version = pc.checkpoint -> 'channel_versions' ->> '{MESSAGES}'
  WHERE m.size > %(whole_max)s AND pc.thread_id = c.thread_id
    AND pc.checkpoint_ns = c.checkpoint_ns AND pc.checkpoint_id = c.parent_checkpoint_id
  LIMIT 1
) p ON true
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
# A stored value larger than this is not sent whole when its step's writes can prove
# what it ends with (``CHECKPOINT_COLUMNS``); smaller ones cost less sent than proven.
WHOLE_VALUE_BYTES = 1 << 16
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
# DeltaChannel snapshots kept decoded (id index included), by ``(thread, version)``:
# a blob at a version is never rewritten, so the next checkpoint of a growing thread
# reads only its newer writes.
KEPT_SNAPSHOTS = 4


class BlobView(Loader):
    """``bytea`` (binary) as a view of the result's own buffer, which the view keeps
    alive: a blob of megabytes is parsed where libpq received it, not copied first."""

    format = Format.BINARY

    def load(self, data: Buffer) -> memoryview:
        return data if isinstance(data, memoryview) else memoryview(data)


def blob_cursor(conn: psycopg.AsyncConnection[Any]) -> psycopg.AsyncCursor[Any]:
    """A binary cursor whose ``bytea`` values are ``memoryview``s (``BlobView``)."""
    cur = conn.cursor(binary=True)
    cur.adapters.register_loader("bytea", BlobView)
    return cur


def checkpoint_params() -> dict[str, Any]:
    """``CHECKPOINT_SQL``'s parameters other than the thread's and checkpoint's."""
    return {"whole_max": WHOLE_VALUE_BYTES}


# A thread id no store holds: the statements below, run for it, are prepared (the
# connection's ``prepare_threshold`` is 0) without reading any thread.
NO_THREAD = "evoscientist-prepare-no-such-thread"


async def prepare(conn: psycopg.AsyncConnection[Any]) -> None:
    """Run this module's statements once on a new connection, for no thread, with
    parameters of the types a first read passes: planned, their catalogs loaded and
    prepared there, a restarted server's first read of each thread pays none of it
    (one round trip and a plan each; a few milliseconds). A database without the
    saver's tables yet fails them: the reads prepare them when they run."""
    thread = {"thread_id": NO_THREAD}
    statements: list[tuple[str, dict[str, Any]]] = [
        (CHECKPOINT_SQL, {**thread, "checkpoint_id": NO_THREAD, **checkpoint_params()}),
        (HISTORY_SQL, {**thread, "start": NO_THREAD, "max_depth": MAX_CHAIN_DEPTH,
                       "known": [], "inline_max": INLINE_SNAPSHOT_BYTES}),
        (SEED_SQL, {**thread, "version": NO_THREAD}),
    ]  # fmt: skip
    try:
        for sql, params in statements:
            async with blob_cursor(conn) as cur:
                await cur.execute(sql, params)
        await conn.execute(SEED_CHECK_SQL, {**thread, "version": NO_THREAD, "ids": [b"-"]})
    except psycopg.Error:
        pass


class LazyDecoder:
    """The lazy decode of one reader, with the snapshots it keeps decoded."""

    def __init__(self) -> None:
        self.seeds: LruCache[tuple[str, str], delta.Seed] = LruCache(KEPT_SNAPSHOTS)

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
            async with blob_cursor(conn) as cur:
                params = {"thread_id": thread_id, "checkpoint_id": checkpoint_id}
                await cur.execute(CHECKPOINT_SQL, {**params, **checkpoint_params()})
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
                channel_values[_text(channel)] = lazy.materialize(_parse(type_, blob), hook)
        stored_messages: Any = None
        newest: value_end.Newest | None = None
        if row["messages_type"] not in (None, "empty"):
            if row["messages"] is not None:
                stored_messages = _parse(row["messages_type"], row["messages"])
            else:
                newest = _newest(row)
                if newest is None:
                    stored_messages = await _whole_value(conn, thread_id, checkpoint)
        pending_writes = [
            (_text(task_id), _text(channel), serde.loads_typed((_text(type_), bytes(blob))))
            for task_id, channel, type_, blob, _, _ in sorted(
                row["status_writes"] or [],
                key=lambda w: writes_sort_key(_text(w[4]), _text(w[0]), int(_text(w[5]))),
            )
        ]
        seed_version: str | None = None
        entries: Sequence[Any]
        if newest is not None:
            entries = newest
        elif stored_messages is not None:
            entries = lazy.messages_value(stored_messages)
        elif is_delta_channel(metadata) and parent_id:
            entries, seed_version = await self._delta_entries(conn, thread_id, parent_id)
        else:
            entries = []
        while True:
            try:
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
            except delta.SeedNeeded as need:  # nothing was built from a wrong fold: again
                assert isinstance(entries, delta.Joined) and seed_version is not None
                await _consult(conn, thread_id, seed_version, entries.seed, need)
            except value_end.WholeNeeded:  # the step's own entries did not decide
                entries = lazy.messages_value(await _whole_value(conn, thread_id, checkpoint))

    async def _delta_entries(
        self, conn: psycopg.AsyncConnection[Any], thread_id: str, parent_id: str
    ) -> tuple[Sequence[Any], str | None]:
        """The channel's value at the checkpoint whose parent is ``parent_id``: the
        nearest stored value up the chain, then every write since (the checkpoint's own
        excluded), folded as the channel's reducer would; and that stored value's
        version (None: no snapshot). A large snapshot is not read here
        (``INLINE_SNAPSHOT_BYTES``)."""
        known = [version for (thread, version) in self.seeds if thread == thread_id]
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
        if not any(row["kind"] == "c" for row in rows):
            raise StoreUnavailable(f"checkpoint {parent_id} vanished while reading")
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
                if row["blob"] is None:  # large: consulted where it lies (``_consult``)
                    seed = delta.Seed(None)
                else:
                    seed = delta.seed_of(_parse(row["type"], row["blob"]))
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
        return delta.replay(seed if seed is not None else delta.Seed([]), batches), seed_version


async def _consult(
    conn: psycopg.AsyncConnection[Any],
    thread_id: str,
    version: str,
    seed: delta.Seed,
    need: delta.SeedNeeded,
) -> None:
    """Answer ``need`` for a snapshot left on the server: a scan there for a few ids
    (their bytes found nowhere in it: it holds none of them), else its bytes, read."""
    params: dict[str, Any] = {"thread_id": thread_id, "version": version}
    if need.ids and len(need.ids) <= SERVER_CHECKED_IDS and not seed.scanned:
        ids = sorted(need.ids)
        seed.scanned = True
        cur = await conn.execute(SEED_CHECK_SQL, {**params, "ids": [i.encode() for i in ids]})
        found = (await cur.fetchone() or {}).get("found")
        if found is None:
            raise StoreUnavailable(f"snapshot {version} of {thread_id} vanished while reading")
        if not found:
            seed.mark_absent(ids)
            return
    async with blob_cursor(conn) as bcur:
        await bcur.execute(SEED_SQL, params)
        row = await bcur.fetchone()
    if row is None:
        raise StoreUnavailable(f"snapshot {version} of {thread_id} vanished while reading")
    seed.fill(_parse(row["type"], row["blob"]))


def _newest(row: dict[str, Any]) -> value_end.Newest | None:
    """The newest entries of a value not sent whole, as its step's writes prove them
    (``value_end``), or None: the step's writes do not show what it ends with."""
    if row["messages_tail"] is None or row["messages_head"] is None:
        return None
    if row["messages_type"] != "msgpack" or row["parent_type"] not in (None, "msgpack"):
        return None
    writes = sorted(
        row["step_writes"] or [],
        key=lambda w: writes_sort_key(_text(w[1]), _text(w[0]), int(_text(w[2]))),
    )
    if any(_text(type_) != "msgpack" for _, _, _, type_, _ in writes):
        return None
    end = value_end.StoredEnd(
        head=bytes(row["messages_head"]),
        size=row["messages_size"],
        tail=bytes(row["messages_tail"]),
        parent_head=None if row["parent_type"] is None else bytes(row["parent_head"]),
        parent_size=row["parent_size"] or 0,
    )
    entries = value_end.newest_entries(end, [blob for *_, blob in writes])
    return None if entries is None else value_end.Newest(entries)


async def _whole_value(
    conn: psycopg.AsyncConnection[Any], thread_id: str, checkpoint: dict[str, Any]
) -> Any:
    """The checkpoint's stored messages value, read whole (``SEED_SQL``: a blob at a
    version is written once)."""
    version = (checkpoint.get("channel_versions") or {}).get(MESSAGES)
    params = {"thread_id": thread_id, "version": str(version)}
    async with blob_cursor(conn) as cur:
        await cur.execute(SEED_SQL, params)
        row = await cur.fetchone()
    if row is None:
        raise StoreUnavailable(f"messages of {thread_id} at {version} vanished while reading")
    return _parse(row["type"], row["blob"])


def _text(value: Buffer) -> str:
    return bytes(value).decode()


def _parse(type_: str | Buffer, blob: Buffer | None) -> Any:
    kind = type_ if isinstance(type_, str) else _text(type_)
    if kind != "msgpack" or blob is None:
        raise lazy.Unexpected(f"{kind!r} blob")
    try:
        return lazy.parse(blob)
    except Exception as exc:  # ormsgpack raises its own error types
        raise lazy.Unexpected(f"unparseable blob: {exc}") from exc
