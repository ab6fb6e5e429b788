"""The commit mark of a WAL-mode ``sessions.db``: the header of its wal-index. A mark read
before a query and found equal later says the query's result still holds: one ``pread``,
no trip to aiosqlite's thread.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

HEADER_BYTES = 48
# ``iVersion`` (u32), unused (u32), ``iChange`` (u32), ``isInit`` (u8): native order.
_HEADER_START = struct.Struct("=IIIB")
WAL_INDEX_VERSION = 3007000

Identity = tuple[int, int]
# The database file's identity, the index file's, and the header: a file renamed over
# either (a restored backup) or removed is a change, whatever the header says.
Mark = tuple[Identity, Identity, bytes]


class WalIndex:
    """The ``-shm`` file of one database, opened once and kept open.

    Every commit rewrites the header at the start of ``<db>-shm`` (frame count, salts,
    checksums), and a reader's query sees exactly the commits it publishes. The change
    signal's file events cannot vouch while a commit is under way: its frames reach the WAL
    before the header publishes them, and writes to the mapped index raise no file event.
    Read with ``pread``, never mapped: SQLite truncates the file when it rebuilds the index,
    and touching a mapped page past the end would kill the process (SIGBUS). No mark is
    given, and the caller queries, whenever the index cannot vouch: rollback-journal mode
    (no ``-shm``), a file gone, an index not yet initialised, or the header's two copies
    differing (a write under way). Layout: SQLite's "WAL-mode file format" document,
    section "The WAL-Index Header"."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.path = db_path.with_name(f"{db_path.name}-shm")
        self._fd: int | None = None
        self._identity: Identity | None = None

    def mark(self) -> Mark | None:
        """The published state of the store now, or None when the index cannot vouch
        for one. Cheap enough for the event loop (a ``stat`` and a 96-byte ``pread``),
        and nothing here blocks on another process's lock."""
        try:
            database = os.stat(self.db_path)
            info = os.stat(self.path)
        except OSError:
            self.close()
            return None
        identity = (info.st_dev, info.st_ino)
        if identity != self._identity and not self._reopen(identity):
            return None
        assert self._fd is not None
        try:
            data = os.pread(self._fd, 2 * HEADER_BYTES, 0)
        except OSError:
            return None
        header = data[:HEADER_BYTES]
        if len(data) < 2 * HEADER_BYTES or header != data[HEADER_BYTES:]:
            return None
        version, _unused, _changes, initialised = _HEADER_START.unpack_from(header)
        if version != WAL_INDEX_VERSION or not initialised:
            return None
        return (database.st_dev, database.st_ino), identity, header

    def _reopen(self, identity: Identity) -> bool:
        self.close()
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != identity:  # replaced between the two calls
            os.close(fd)
            return False
        self._fd, self._identity = fd, identity
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._identity = None, None
