"""The answering checkpoint's parts, fetched from the PostgreSQL checkpointer's tables for
the lazy decode (``decoding.decode_parts``). Mirrors ``store/sqlite/parts.py``; here only
the blobs that answer are read, and a large value only as far as it must be.
"""

from __future__ import annotations

from typing import Any

import psycopg
from langgraph.checkpoint.base import writes_sort_key
from langgraph.checkpoint.serde.base import SerializerProtocol

from evoscientist_final_answer.answer.status import (
    BRANCH_PREFIX,
    ERROR_CHANNEL,
    INTERRUPT_CHANNEL,
    JOIN_PREFIX,
    RESUME_CHANNEL,
    START_CHANNEL,
    TASKS_CHANNEL,
)
from evoscientist_final_answer.store import delta, lazy, value_end
from evoscientist_final_answer.store.decoding import CheckpointParts
from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.messages import MESSAGES
from evoscientist_final_answer.store.postgres.blobs import blob_cursor, parse, text
from evoscientist_final_answer.store.postgres.history import (
    HISTORY_SQL,
    INLINE_SNAPSHOT_BYTES,
    MAX_CHAIN_DEPTH,
    SEED_CHECK_SQL,
    SEED_SQL,
    HistoryWalker,
    consult,
    stored_value,
)

# Channels whose value can decide the status (``evoscientist_final_answer.answer.status``).
_STATUS_CHANNELS = f"""(v.key IN ('{START_CHANNEL}', '{TASKS_CHANNEL}')
       OR starts_with(v.key, '{BRANCH_PREFIX}') OR starts_with(v.key, '{JOIN_PREFIX}'))"""
# The checkpoint row, the ``messages`` blob at the version it names and the status
# channels' blobs (``checkpoint_blobs``' primary key), and the writes that decide the
# status: one round trip. The large blob is a column of its own: put in an array (as
# the saver's own SELECT does) it would be copied once more on the server. A blob over
# ``whole_max`` bytes is not sent: its first bytes, its size and as many of its last
# bytes as the step that made it wrote (those writes, against the parent checkpoint,
# and the parent's value's first bytes and size come too) prove what it ends with
# (``evoscientist_final_answer.store.value_end``). Each lookup is a primary-key lookup, kept apart
# from its join by a ``LIMIT`` (as ``history.HISTORY_SQL``'s steps): joined
# in, the planner scanned the thread's rows for each (the status blobs every blob of
# the thread; the parent's value, every checkpoint: a 200-checkpoint thread's first
# read took 50 ms instead of 3).
CHECKPOINT_COLUMNS = f"""
SELECT c.checkpoint, c.metadata, c.parent_checkpoint_id, m.type AS messages_type,
  CASE WHEN m.size <= %(whole_max)s THEN m.blob END AS messages,
  m.size AS messages_size,
  CASE WHEN m.size > %(whole_max)s THEN substring(m.blob FROM 1 FOR {value_end.HEAD_BYTES})
  END AS messages_head,
  CASE WHEN s.size BETWEEN 1 AND m.size THEN substring(m.blob FROM (m.size - s.size + 1)::int)
  END AS messages_tail,
  s.writes AS step_writes, p.type AS parent_type, p.size AS parent_size, p.head AS parent_head,
  (SELECT array_agg(array[v.key::bytea, bl.type::bytea, bl.blob])
     FROM jsonb_each_text(c.checkpoint -> 'channel_versions') v
     CROSS JOIN LATERAL (
       SELECT b.type, b.blob FROM checkpoint_blobs b
       WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
         AND b.channel = v.key AND b.version = v.value
       LIMIT 1
     ) bl
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
  LIMIT 1
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
  FROM checkpoints pc CROSS JOIN LATERAL (
    SELECT b.type, b.blob FROM checkpoint_blobs b
    WHERE b.thread_id = pc.thread_id AND b.checkpoint_ns = pc.checkpoint_ns
      AND b.channel = '{MESSAGES}'
      AND b.version = pc.checkpoint -> 'channel_versions' ->> '{MESSAGES}'
    LIMIT 1
  ) pb
  WHERE m.size > %(whole_max)s AND pc.thread_id = c.thread_id
    AND pc.checkpoint_ns = c.checkpoint_ns AND pc.checkpoint_id = c.parent_checkpoint_id
  LIMIT 1
) p ON true
WHERE c.thread_id = %(thread_id)s AND c.checkpoint_ns = '' AND c.checkpoint_id = {{checkpoint_id}}
LIMIT 1
"""
CHECKPOINT_SQL = CHECKPOINT_COLUMNS.format(checkpoint_id="%(checkpoint_id)s")


def with_checkpoint_row(head_sql: str) -> str:
    """``head_sql`` (one row: ``kind``, ``checkpoint_id``, ``writes``, ``version``) with
    its checkpoint's ``CHECKPOINT_SQL`` columns, in one statement: a thread's first read
    then costs one round trip, not two."""
    row = CHECKPOINT_COLUMNS.format(checkpoint_id="h.checkpoint_id")
    return f"WITH h AS ({head_sql}) SELECT h.*, d.* FROM h CROSS JOIN LATERAL ({row}) d"


# A stored value larger than this is not sent whole when its step's writes can prove
# what it ends with (``CHECKPOINT_COLUMNS``); smaller ones cost less sent than proven.
WHOLE_VALUE_BYTES = 1 << 16


def checkpoint_params() -> dict[str, Any]:
    """``CHECKPOINT_SQL``'s parameters other than the thread's and checkpoint's."""
    return {"whole_max": WHOLE_VALUE_BYTES}


# A thread id no store holds: the statements below, run for it, are prepared (the
# connection's ``prepare_threshold`` is 0) without reading any thread.
NO_THREAD = "evoscientist-prepare-no-such-thread"


async def prepare(conn: psycopg.AsyncConnection[Any]) -> None:
    """Run the decode's statements (this module's and ``history``'s) once on a new
    connection, for no thread, with parameters of the types a first read passes:
    planned, their catalogs loaded and prepared there, a restarted server's first read
    of each thread pays none of it (one round trip and a plan each; a few
    milliseconds). A database without the saver's tables yet fails them: the reads
    prepare them when they run."""
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


class PostgresParts:
    """One checkpoint's parts (``decoding.PartsSource``), read over ``conn``; ``row``:
    its ``CHECKPOINT_SQL`` columns, when already read (the head query brings them along on
    a thread's first read).

    ``AsyncPostgresSaver`` stores channel values in ``checkpoint_blobs`` by version, so the
    row's statement reads only the ``messages`` blob at the checkpoint's own version and the
    small channels that decide the run's status (``branch:to:*``, ``join:*``,
    ``__start__``, ``__pregel_tasks``). A large messages value is sent only as far as its
    last step's writes prove what it ends with (``value_end``), and read whole (``more``)
    only when they do not decide the answer; a large DeltaChannel snapshot stays on the
    server until the answer needs it (``history.consult``). Blobs are parsed where libpq
    received them (``blobs.BlobView``)."""

    __slots__ = (
        "_checkpoint",
        "_history",
        "_seed_version",
        "checkpoint_id",
        "conn",
        "row",
        "serde",
        "thread_id",
    )

    def __init__(
        self,
        conn: psycopg.AsyncConnection[Any],
        serde: SerializerProtocol,
        thread_id: str,
        checkpoint_id: str,
        history: HistoryWalker,
        row: dict[str, Any] | None = None,
    ) -> None:
        self.conn = conn
        self.serde = serde
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
        self._history = history
        self.row = row
        self._checkpoint: dict[str, Any] = {}
        self._seed_version: str | None = None  # the history's stored value's version

    async def checkpoint(self) -> CheckpointParts:
        row = self.row
        if row is None:
            async with blob_cursor(self.conn) as cur:
                params = {"thread_id": self.thread_id, "checkpoint_id": self.checkpoint_id}
                await cur.execute(CHECKPOINT_SQL, {**params, **checkpoint_params()})
                row = await cur.fetchone()
        if row is None:
            raise StoreUnavailable(f"checkpoint {self.checkpoint_id} vanished while reading")
        checkpoint, metadata = row["checkpoint"], row["metadata"] or {}
        if not isinstance(checkpoint, dict) or not isinstance(metadata, dict):
            raise lazy.Unexpected("checkpoint or metadata is not a JSON object")
        self._checkpoint = checkpoint
        inline = checkpoint.get("channel_values") or {}
        channel_values: dict[str, Any] = {k: v for k, v in inline.items() if k != MESSAGES}
        for channel, type_, blob in row["blobs"] or []:
            if type_ != b"empty":
                channel_values[text(channel)] = parse(type_, blob)
        messages: Any = None
        if row["messages_type"] not in (None, "empty"):
            if row["messages"] is not None:
                messages = lazy.messages_value(parse(row["messages_type"], row["messages"]))
            else:
                messages = _newest(row)
                if messages is None:
                    messages = lazy.messages_value(
                        await _whole_value(self.conn, self.thread_id, checkpoint)
                    )
        return CheckpointParts(
            checkpoint_id=self.checkpoint_id,
            parent_id=row["parent_checkpoint_id"],
            metadata=metadata,
            ts=checkpoint.get("ts"),
            channel_values=channel_values,
            pending_writes=[
                (text(task_id), text(channel), text(type_), bytes(blob))
                for task_id, channel, type_, blob, _, _ in sorted(
                    row["status_writes"] or [],
                    key=lambda w: writes_sort_key(text(w[4]), text(w[0]), int(text(w[5]))),
                )
            ],
            messages=messages,
        )

    async def history(self, parent_id: str) -> delta.History:
        history, self._seed_version = await self._history.walk(self.conn, self.thread_id, parent_id)
        return history

    async def more(self, parts: CheckpointParts, need: lazy.PartNeeded) -> None:
        if isinstance(need, delta.SeedNeeded):  # a snapshot left on the server
            assert isinstance(parts.messages, delta.Joined) and self._seed_version is not None
            await consult(self.conn, self.thread_id, self._seed_version, parts.messages.seed, need)
        elif isinstance(need, value_end.WholeNeeded):  # the step's own entries did not decide
            whole = await _whole_value(self.conn, self.thread_id, self._checkpoint)
            parts.messages = lazy.messages_value(whole)
        else:
            raise lazy.Unexpected(f"nothing fetches {need!r}")


def _newest(row: dict[str, Any]) -> value_end.Newest | None:
    """The newest entries of a value not sent whole, as its step's writes prove them
    (``value_end``), or None: the step's writes do not show what it ends with."""
    if row["messages_tail"] is None or row["messages_head"] is None:
        return None
    if row["messages_type"] != "msgpack" or row["parent_type"] not in (None, "msgpack"):
        return None
    writes = sorted(
        row["step_writes"] or [],
        key=lambda w: writes_sort_key(text(w[1]), text(w[0]), int(text(w[2]))),
    )
    if any(text(type_) != "msgpack" for _, _, _, type_, _ in writes):
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
    """The checkpoint's stored messages value, read whole."""
    version = (checkpoint.get("channel_versions") or {}).get(MESSAGES)
    return await stored_value(conn, thread_id, str(version))
