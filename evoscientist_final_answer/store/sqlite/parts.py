"""The answering checkpoint's parts, fetched from ``sessions.db``'s tables for the lazy
decode (``decoding.decode_parts``). Mirrors ``store/postgres/parts.py``; here every
channel's value is in the checkpoint's one blob, so the row is all there is to read.
"""

from __future__ import annotations

import json
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from evoscientist_final_answer.answer.status import ERROR_CHANNEL, INTERRUPT_CHANNEL, RESUME_CHANNEL
from evoscientist_final_answer.store import delta, lazy
from evoscientist_final_answer.store.decoding import CheckpointParts
from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.messages import MESSAGES
from evoscientist_final_answer.store.sqlite.connection import fetch
from evoscientist_final_answer.store.sqlite.history import HistoryWalker

# The row, with the writes that decide the status in the same trip (message writes are
# the history's business): JSON, the values hex-encoded.
CHECKPOINT_SQL = f"""
SELECT c.type, c.checkpoint, c.metadata, c.parent_checkpoint_id,
       (SELECT json_group_array(json_array(w.task_id, w.channel, w.type, hex(w.value)))
          FROM (SELECT task_id, channel, type, value FROM writes
                 WHERE thread_id = c.thread_id AND checkpoint_ns = ''
                   AND checkpoint_id = c.checkpoint_id
                   AND channel IN ('{ERROR_CHANNEL}', '{INTERRUPT_CHANNEL}', '{RESUME_CHANNEL}')
                 ORDER BY task_id, idx) AS w)
FROM checkpoints c
WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND c.checkpoint_id = ?
"""


class SqliteParts:
    """One checkpoint's parts (``decoding.PartsSource``), read through ``saver``'s
    connection; ``row``: its ``CHECKPOINT_SQL`` row, when already read."""

    __slots__ = ("_history", "checkpoint_id", "row", "saver", "thread_id")

    def __init__(
        self,
        saver: AsyncSqliteSaver,
        thread_id: str,
        checkpoint_id: str,
        history: HistoryWalker,
        row: Any | None = None,
    ) -> None:
        self.saver = saver
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
        self._history = history
        self.row = row

    @property
    def serde(self) -> SerializerProtocol:
        return self.saver.serde

    async def checkpoint(self) -> CheckpointParts:
        row = self.row
        if row is None:
            rows = await fetch(self.saver, CHECKPOINT_SQL, (self.thread_id, self.checkpoint_id))
            if not rows:
                raise StoreUnavailable(f"checkpoint {self.checkpoint_id} vanished while reading")
            row = rows[0]
        type_, blob, metadata_blob, parent_id, status_json = row
        checkpoint = lazy.parse_typed(type_, blob)
        values = checkpoint.get("channel_values")
        if not isinstance(values, dict):
            raise lazy.Unexpected("checkpoint without channel_values")
        return CheckpointParts(
            checkpoint_id=self.checkpoint_id,
            parent_id=parent_id,
            metadata=json.loads(metadata_blob) if metadata_blob is not None else {},
            ts=checkpoint.get("ts"),
            channel_values={name: value for name, value in values.items() if name != MESSAGES},
            pending_writes=[
                (task_id, channel, wtype, bytes.fromhex(value or ""))
                for task_id, channel, wtype, value in json.loads(status_json or "[]")
            ],
            messages=lazy.messages_value(values[MESSAGES]) if MESSAGES in values else None,
        )

    async def history(self, parent_id: str) -> delta.History:
        return await self._history.walk(self.saver, self.thread_id, parent_id)

    async def more(self, parts: CheckpointParts, need: lazy.PartNeeded) -> None:
        # Every part is read by the two above: a snapshot is always read with its row.
        raise lazy.Unexpected(f"nothing more to fetch for {need}")
