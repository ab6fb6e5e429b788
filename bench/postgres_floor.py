"""The PostgreSQL columns next to the Postgres route: its floor (the head row and its
``messages`` blob in one SELECT, parsed without building messages, as the route loads
blobs: what any read of the answer must at least do), a repeat poll (nothing written,
the answer cached per head), and the head query that poll runs, alone.
"""

from __future__ import annotations

from typing import Any

import psycopg

from evoscientist_final_answer.store import lazy
from evoscientist_final_answer.store.postgres.blobs import blob_cursor
from evoscientist_final_answer.store.postgres.connection import read_only_kwargs
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader

FLOOR_SQL = """
SELECT c.checkpoint, c.metadata,
  (SELECT bl.blob FROM checkpoint_blobs bl
    WHERE bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns
      AND bl.channel = 'messages'
      AND bl.version = c.checkpoint -> 'channel_versions' ->> 'messages') AS messages
FROM checkpoints c
WHERE c.thread_id = %s AND c.checkpoint_ns = ''
ORDER BY c.checkpoint_id DESC LIMIT 1
"""


class PostgresFloor:
    """One read-only connection, configured as the reader's pool connections are."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.conn: psycopg.AsyncConnection[Any] | None = None

    async def __call__(self, thread_id: str) -> Any:
        if self.conn is None:
            self.conn = await psycopg.AsyncConnection.connect(
                self.uri, **read_only_kwargs(self.uri)
            )
        async with blob_cursor(self.conn) as cur:  # dict rows: read_only_kwargs
            await cur.execute(FLOOR_SQL, (thread_id,))
            row = await cur.fetchone()
        assert row is not None
        return lazy.parse(row["messages"]) if row["messages"] is not None else None

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()


async def head_query(reader: PostgresAnswerReader, thread_id: str) -> None:
    """The query a repeat poll runs, alone (no route, no cache lookup)."""
    await reader.head(thread_id, None)
