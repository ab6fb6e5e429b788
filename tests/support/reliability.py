"""Helpers for the reliability tests: the documented error shape, damaging a real seeded
``sessions.db`` with SQL, and the log lines a failed request leaves.

Every store these tests damage was written by a real graph (``tests/support/seeds.py``); the
damage is done afterwards, through a separate ``sqlite3`` connection, the way a bad disk,
a half-copied file, a newer langgraph or a pruning job would leave it.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import ormsgpack
import pytest

from evoscientist_final_answer.http.openapi import ERROR_SCHEMA
from evoscientist_final_answer.store import lazy

# Every code the OpenAPI document lists for an error body.
ERROR_CODES = set(ERROR_SCHEMA["properties"]["error"]["properties"]["code"]["enum"])
# What a client must never see in an error body.
LEAKS = ("Traceback", "database is locked", "sqlite", 'File "', ".db", "Error:")


def assert_error(
    response: httpx.Response, status: int, code: str, *, retryable: bool | None = None
) -> dict[str, Any]:
    """The documented error: ``{"detail", "error": {"code", "message", "retryable"}}``."""
    assert response.status_code == status, response.text
    assert_error_shape(response)
    body = response.json()
    assert body["error"]["code"] == code, body
    if retryable is not None:
        assert body["error"]["retryable"] is retryable, body
    return body


def assert_error_shape(response: httpx.Response) -> None:
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert set(body) == {"detail", "error"}, body
    assert set(body["error"]) == {"code", "message", "retryable"}, body
    assert body["error"]["code"] in ERROR_CODES, body
    assert isinstance(body["error"]["retryable"], bool)
    assert isinstance(body["detail"], str) and body["detail"] == body["error"]["message"]
    assert response.headers["cache-control"] == "no-store"
    if body["error"]["retryable"]:
        assert response.headers.get("retry-after")
    # A message may name the caller's own bad value (``format='sqlite'``): a word the
    # request itself holds is an echo, not a leak.
    asked = unquote(str(response.request.url))
    for leak in LEAKS:
        if leak not in asked:
            assert leak not in response.text, (leak, response.text)


# ------------------------------------------------------------------ damaging a store


@contextmanager
def writer(db_path: Path) -> Iterator[sqlite3.Connection]:
    """A plain read-write connection of another "process" (committed on exit)."""
    with closing(sqlite3.connect(db_path, timeout=10)) as conn:
        yield conn
        conn.commit()


def head_checkpoint_id(db_path: Path, thread_id: str) -> str:
    with writer(db_path) as conn:
        (checkpoint_id,) = conn.execute(
            "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread_id,),
        ).fetchone()
    assert checkpoint_id is not None
    return checkpoint_id


def update_head(db_path: Path, thread_id: str, sql_set: str, *params: Any) -> str:
    """``UPDATE checkpoints SET <sql_set>`` on the thread's newest root checkpoint."""
    checkpoint_id = head_checkpoint_id(db_path, thread_id)
    with writer(db_path) as conn:
        cur = conn.execute(
            f"UPDATE checkpoints SET {sql_set} "
            "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
            (*params, thread_id, checkpoint_id),
        )
        assert cur.rowcount == 1
    return checkpoint_id


def head_blob(db_path: Path, thread_id: str) -> bytes:
    checkpoint_id = head_checkpoint_id(db_path, thread_id)
    with writer(db_path) as conn:
        (blob,) = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
            "AND checkpoint_id = ?",
            (thread_id, checkpoint_id),
        ).fetchone()
    return bytes(blob)


def repack(value: Any) -> bytes:
    """msgpack again, ext records (``lazy.Ext``) kept byte for byte."""

    def restore(item: Any) -> Any:
        if isinstance(item, lazy.Ext):
            return ormsgpack.Ext(item.code, item.data)
        if isinstance(item, list):
            return [restore(i) for i in item]
        if isinstance(item, dict):
            return {k: restore(v) for k, v in item.items()}
        return item

    return ormsgpack.packb(restore(value), option=ormsgpack.OPT_NON_STR_KEYS)


def chain(db_path: Path, thread_id: str) -> list[tuple[str, bool]]:
    """The head's root-namespace ancestry, newest first: ``(checkpoint_id, holds
    messages)`` — a DeltaChannel stores its messages only at snapshot steps."""
    with writer(db_path) as conn:
        rows = {
            checkpoint_id: (parent, type_, bytes(blob))
            for checkpoint_id, parent, type_, blob in conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ''",
                (thread_id,),
            )
        }
    result: list[tuple[str, bool]] = []
    current: str | None = max(rows)
    while current is not None and current in rows:
        parent, type_, blob = rows[current]
        assert type_ == "msgpack"
        values = lazy.parse(blob).get("channel_values") or {}
        result.append((current, "messages" in values))
        current = parent
    return result


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def store_files(path: Path) -> dict[str, str | None]:
    """The database, its WAL and its rollback journal, by name, with a digest of their bytes."""
    return {
        name: digest(path.with_name(name))
        for name in (path.name, f"{path.name}-wal", f"{path.name}-journal")
    }


def table_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the saver's tables (read with ``mode=ro``: reading must not write)."""
    uri = f"file:{path}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in ("checkpoints", "writes")
        }


# ------------------------------------------------------------------ logs


def problem_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The project's own log lines at WARNING or above."""
    return [
        record.getMessage()
        for record in caplog.records
        if record.levelno >= logging.WARNING
        and record.name.startswith(("EvoScientist", "evoscientist_final_answer"))
    ]


def assert_one_line_naming(caplog: pytest.LogCaptureFixture, thread_id: str, *words: str) -> str:
    lines = problem_lines(caplog)
    assert len(lines) == 1, lines
    assert thread_id in lines[0], lines
    for word in words:
        assert word in lines[0], lines
    return lines[0]
