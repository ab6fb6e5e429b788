"""PostgreSQL ``bytea`` read where libpq received it, and parsed as the lazy decode parses
blobs (``lazy.parse_typed``); ``sqlite3`` hands blobs over as ``bytes`` already.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg.pq import Format

from evoscientist_final_answer.store import lazy


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


def text(value: Buffer) -> str:
    return bytes(value).decode()


def parse(type_: str | Buffer, blob: Buffer | None) -> Any:
    """A ``(type, blob)`` pair of the saver's tables parsed (``lazy.parse_typed``)."""
    return lazy.parse_typed(type_ if isinstance(type_, str) else text(type_), blob)
