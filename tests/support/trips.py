"""Counting a SQLite reader's trips to aiosqlite's thread: every statement it runs goes
through the connection's ``_execute`` (``store.sqlite.connection.fetch`` and
``in_one_trip``), each call one trip."""

from __future__ import annotations

import pytest

from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader


def count_trips(reader: SqliteAnswerReader, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The list each trip of ``reader``'s open connection is appended to from now on,
    until ``monkeypatch.undo()``."""
    conn = reader._conn
    assert conn is not None
    execute = conn._execute
    trips: list[object] = []

    async def counted(fn: object, *args: object, **kwargs: object) -> object:
        trips.append(fn)
        return await execute(fn, *args, **kwargs)

    monkeypatch.setattr(conn, "_execute", counted)
    return trips
