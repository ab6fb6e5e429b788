"""Read a thread's final answer straight from ``sessions.db``, read-only (a GET never
writes to the store and never creates it). Mirrors ``store/postgres/reader.py``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store.base import CheckpointAnswerReader, Head
from evoscientist_final_answer.store.checkpoint_facts import CheckpointFacts
from evoscientist_final_answer.store.decoding import decode, decode_parts
from evoscientist_final_answer.store.deleted_runs import SQLITE_DELETED_SQL, SQLITE_NO_TABLE
from evoscientist_final_answer.store.lru import LruCache
from evoscientist_final_answer.store.messages import saver_answer
from evoscientist_final_answer.store.sqlite.change_signal import ChangeSignal, change_signal
from evoscientist_final_answer.store.sqlite.connection import (
    ReadOnlyConnection,
    fetch,
    in_one_trip,
    store_failure,
)
from evoscientist_final_answer.store.sqlite.history import HistoryWalker, check_pruned
from evoscientist_final_answer.store.sqlite.parts import CHECKPOINT_SQL, SqliteParts
from evoscientist_final_answer.store.sqlite.wal_index import Mark, WalIndex
from evoscientist_final_answer.store.watch import ThreadWatch

# Which checkpoint answers: the newest root-namespace one (subgraph checkpoints never
# answer) that this agent wrote (another agent's rows in a shared thread never do), for
# ``run_id`` that run's, for an authenticated user one of that user's runs
# (langgraph-api records ``langgraph_auth_user_id`` in checkpoint metadata).
#
# Ids come newest first from the primary key alone (a covering index), each with a
# signature of the writes stored against it (a resume or an interrupt lands there
# without a new checkpoint; INSERT OR REPLACE gives a replaced row a new rowid).
# ``metadata`` is
# stored after the checkpoint blob, so reading it walks the blob's overflow pages. It
# is read once per checkpoint and kept (``CheckpointFacts``), so a repeat poll reads
# no blob at all.
HEAD_IDS_SQL = """
SELECT c.checkpoint_id,
       (SELECT count(*) FROM writes w
         WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = ''
           AND w.checkpoint_id = c.checkpoint_id),
       (SELECT coalesce(max(w.rowid), 0) FROM writes w
         WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = ''
           AND w.checkpoint_id = c.checkpoint_id)
FROM checkpoints c
WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND c.checkpoint_id < ?
ORDER BY c.checkpoint_id DESC LIMIT ?
"""
# The same signature of the newest root checkpoint (any agent's) of every thread that a
# long-poll waits on, in one trip: what ``ThreadWatch`` compares after each change.
WATCH_SQL = """
WITH h(thread_id, checkpoint_id) AS (
  SELECT t.value,
         (SELECT max(c.checkpoint_id) FROM checkpoints c
           WHERE c.thread_id = t.value AND c.checkpoint_ns = '')
  FROM json_each(?) t
)
SELECT h.thread_id, h.checkpoint_id,
       (SELECT count(*) FROM writes w
         WHERE w.thread_id = h.thread_id AND w.checkpoint_ns = ''
           AND w.checkpoint_id = h.checkpoint_id),
       (SELECT coalesce(max(w.rowid), 0) FROM writes w
         WHERE w.thread_id = h.thread_id AND w.checkpoint_ns = ''
           AND w.checkpoint_id = h.checkpoint_id)
FROM h WHERE h.checkpoint_id IS NOT NULL
"""
# Ids sort below this: the first page of HEAD_IDS_SQL starts from the top.
_AFTER_NEWEST = "\U0010ffff"
HEAD_PAGE = 16
NO_CHECKPOINTS_TABLE = "no such table: checkpoints"

# Checkpoints whose eligibility is remembered.
KNOWN_CHECKPOINTS = 65_536
# Heads remembered with the change token they were read under.
KNOWN_HEADS = 4096
PREFETCHED_ROWS = 8
# The watch's safety net under the change signal: check again this often regardless.
WATCH_IDLE_SECONDS = 5.0


class SqliteAnswerReader(CheckpointAnswerReader):
    """One long-lived read-only connection to ``sessions.db``, reopened after failures.

    Unlike PostgreSQL's reader: the head is found from ids first, and a checkpoint's
    metadata is read once and kept (``CheckpointFacts``); a poll of an unchanged thread
    runs no query while the change signal vouches that nothing was written. The lazy decode
    and the saver's full decode are held against each other by
    ``tests/store/test_lazy_decoding.py``."""

    def __init__(self, path: Path, agent_name: str | None, *, lazy_decoding: bool = True) -> None:
        super().__init__(agent_name)
        self.path = path
        self.lazy_decoding = lazy_decoding
        self._db = ReadOnlyConnection(path)
        # The watch's head checks on a connection of their own: a check then never
        # waits behind the decodes queued on the readers' (a burst of finishing runs),
        # and SQLite runs both at once (WAL readers do not block each other).
        self._watch_db = ReadOnlyConnection(path)
        self._change: ChangeSignal | None = None
        self._wal_index = WalIndex(path)
        self._known: LruCache[tuple[str, str], CheckpointFacts] = LruCache(KNOWN_CHECKPOINTS)
        self._prefetched: LruCache[tuple[str, str], Any] = LruCache(PREFETCHED_ROWS)
        self._history = HistoryWalker()
        self._heads: LruCache[tuple[str, str | None, str | None], _KnownHead] = LruCache(
            KNOWN_HEADS
        )
        # Runs found unmarked (``marked_deleted``), with the change token of that read.
        self._not_deleted: LruCache[str, _Quiet] = LruCache(KNOWN_HEADS)
        self.watch = ThreadWatch(
            self._watch_heads, self._until_changed, idle_cap=WATCH_IDLE_SECONDS
        )
        self._watch_token = 0

    # -- connection ---------------------------------------------------------------

    @property
    def _conn(self) -> aiosqlite.Connection | None:
        return self._db.conn

    async def _open(self) -> AsyncSqliteSaver:
        return await self._db.open()

    async def close(self) -> None:
        await self.watch.close()
        if self._change is not None:
            self._change.close()
            self._change = None
        self._wal_index.close()
        await self._db.close()
        await self._watch_db.close()

    async def _follow_replaced_file(self) -> None:
        if await self._db.follow_replaced_file():
            # Everything learnt was learnt from the old file.
            self.forget_answers()
            self._known.clear()
            self._prefetched.clear()
            self._history.forget()

    # -- CheckpointAnswerReader -------------------------------------------------

    async def head(
        self, thread_id: str, run_id: str | None, user_id: str | None = None
    ) -> Head | None:
        """The head, without a query when nothing was committed since it was last read:
        the wal-index still publishes the state that read saw (a repeat poll, or one in
        the wake of a commit already read), or, with no wal-index to ask (a rollback
        journal), the change signal saw no write. Either way a poll then costs no trip
        to the file.

        The wal-index decides wherever there is one, even while the change signal is
        quiet: a commit's frames reach the WAL, and raise their file events, before its
        header publishes them, which raises none. A writer held up between the two (a
        loaded machine, an ``fsync`` of the WAL) past the signal's trailing report left
        it quiet on a head read before the publish: a finished run's final checkpoint
        went unseen until the next write (a fresh clone's CI, once)."""
        key = (thread_id, run_id, user_id)
        known = self._heads.get(key)
        if known is not None and known.signal is self._change and self._unchanged(known):
            return known.head
        await self._follow_replaced_file()
        async with self._db.session() as saver:
            signal = self._signal()
            # Both before the query: a commit during it is neither quiet nor the mark's.
            token = signal.token()
            mark = self._wal_index.mark()
            try:
                head = await self._eligible_head(saver, thread_id, run_id, user_id)
            except sqlite3.OperationalError as exc:
                if NO_CHECKPOINTS_TABLE not in str(exc):
                    raise
                head = None  # a store nothing has been written to holds no thread
        self._heads.put(key, _KnownHead(signal, token, mark, head))
        return head

    async def _eligible_head(
        self, saver: AsyncSqliteSaver, thread_id: str, run_id: str | None, user_id: str | None
    ) -> Head | None:
        rows, newest_row = await in_one_trip(saver, self._first_page(thread_id))
        # The thread's newest: the watch's token.
        self.watch.remember(thread_id, tuple(rows[0]) if rows else None)
        if newest_row is not None:
            checkpoint_id, count, last_rowid = rows[0]
            self._remember_row(thread_id, checkpoint_id, (count, last_rowid), newest_row)
        while True:
            for checkpoint_id, count, last_rowid in rows:
                facts = await self._facts(saver, thread_id, checkpoint_id, (count, last_rowid))
                if facts is not None and facts.answers(self.agent_name, run_id, user_id):
                    return Head(checkpoint_id, (count, last_rowid))
            if len(rows) < HEAD_PAGE:
                return None
            rows = await fetch(saver, HEAD_IDS_SQL, (thread_id, rows[-1][0], HEAD_PAGE))

    def _first_page(
        self, thread_id: str
    ) -> Callable[[sqlite3.Connection], tuple[list[Any], Any | None]]:
        """The newest ids and, unless its facts are known, the newest one's row (it
        usually answers, and is decoded next): one trip where there were two."""
        known = self._known

        def read(conn: sqlite3.Connection) -> tuple[list[Any], Any | None]:
            rows = conn.execute(HEAD_IDS_SQL, (thread_id, _AFTER_NEWEST, HEAD_PAGE)).fetchall()
            # A membership test only, which reorders nothing: this runs on aiosqlite's
            # thread, while the event loop may be using the cache.
            if rows and (thread_id, rows[0][0]) not in known:
                return rows, conn.execute(CHECKPOINT_SQL, (thread_id, rows[0][0])).fetchone()
            return rows, None

        return read

    async def _facts(
        self,
        saver: AsyncSqliteSaver,
        thread_id: str,
        checkpoint_id: str,
        writes: tuple[int, int] | None = None,
    ) -> CheckpointFacts | None:
        key = (thread_id, checkpoint_id)
        facts = self._known.get(key)
        if facts is None:
            # The whole row: metadata sits behind the blob anyway, and the head is
            # usually decoded next (``_prefetched`` hands the row over).
            rows = await fetch(saver, CHECKPOINT_SQL, key)
            if not rows:
                return None  # deleted since the ids were read
            facts = self._remember_row(thread_id, checkpoint_id, writes, rows[0])
        return facts

    def _remember_row(
        self, thread_id: str, checkpoint_id: str, writes: tuple[int, int] | None, row: Any
    ) -> CheckpointFacts:
        """A checkpoint's ``CHECKPOINT_SQL`` row: its facts kept, the row handed to the
        decode that usually follows."""
        facts = CheckpointFacts.of(row[2])
        self._known.put((thread_id, checkpoint_id), facts)
        self._prefetched.put((thread_id, checkpoint_id), (writes, row))
        return facts

    async def answer(self, thread_id: str, head: Head) -> FinalAnswer:
        async with self._db.session() as saver:
            checkpoint_id = head.checkpoint_id

            async def lazily() -> FinalAnswer:
                return await self.lazy_answer(saver, thread_id, checkpoint_id, head.writes)

            async def fully() -> FinalAnswer:
                return await self.full_answer(saver, thread_id, checkpoint_id)

            return await decode(
                thread_id,
                checkpoint_id,
                lazy_decode=lazily if self.lazy_decoding else None,
                full_decode=fully,
                store_failure=store_failure,
            )

    async def marked_deleted(self, run_id: str) -> bool:
        """The mark, looked up without a trip to the file while the change signal
        vouches that nothing was written since it was last found missing: a repeat
        poll of a run not written yet then costs no more than before there were marks
        (a mark is a write, so it ends the quiet)."""
        known = self._not_deleted.get(run_id)
        if known is not None and known.signal is self._change and self._unchanged(known):
            return False
        await self._follow_replaced_file()
        async with self._db.session() as saver:
            signal = self._signal()
            token = signal.token()  # before the query: a commit during it is not quiet
            mark = self._wal_index.mark()
            try:
                rows = await fetch(saver, SQLITE_DELETED_SQL, (run_id,))
            except sqlite3.OperationalError as exc:
                if SQLITE_NO_TABLE not in str(exc):
                    raise
                rows = []  # nothing was ever deleted from this store
        if rows:
            return True
        self._not_deleted.put(run_id, _Quiet(signal, token, mark))
        return False

    def _unchanged(self, known: _Quiet) -> bool:
        """Nothing committed since ``known`` was learnt: as ``head`` judges it, the
        wal-index deciding wherever there is one."""
        mark = self._wal_index.mark()
        if mark is not None or known.mark is not None:
            return mark == known.mark
        return known.signal.quiet_since(known.token)

    def forget_answers(self) -> None:
        super().forget_answers()
        self._heads.clear()
        self._not_deleted.clear()

    def change_token(self, thread_id: str) -> object:
        """The thread's signature as the watch last saw it."""
        return self.watch.token(thread_id)

    async def wait_for_change(self, thread_id: str, since: object, timeout: float) -> None:
        """Wake once the thread's newest checkpoint or its writes change: one watch task
        runs ``WATCH_SQL`` for every waited-on thread after each write to the file, its
        WAL or its journal (the change signal cannot tell threads apart)."""
        await self.watch.wait(thread_id, since, timeout)  # type: ignore[arg-type]

    async def _watch_heads(self, thread_ids: list[str]) -> dict[str, Any]:
        await self._follow_replaced_file()
        await self._watch_db.follow_replaced_file()
        async with self._watch_db.session() as saver:
            self._watch_token = self._signal().token()  # before the query, as for a read
            try:
                rows = await fetch(saver, WATCH_SQL, (json.dumps(thread_ids),))
            except sqlite3.OperationalError as exc:
                if NO_CHECKPOINTS_TABLE not in str(exc):
                    raise
                return {}
        return {thread_id: (cid, count, last) for thread_id, cid, count, last in rows}

    async def _until_changed(self, timeout: float) -> None:
        await self._signal().wait(self._watch_token, timeout)

    def _signal(self) -> ChangeSignal:
        if self._change is None:
            self._change = change_signal(self.path.resolve())
        return self._change

    # -- decoding -------------------------------------------------------------------

    async def full_answer(
        self, saver: AsyncSqliteSaver, thread_id: str, checkpoint_id: str
    ) -> FinalAnswer:
        """The saver decodes the checkpoint, its pending writes and its DeltaChannel
        history; the channel's reducer rebuilds the messages (as ``PostgresAnswerReader``)."""
        return await saver_answer(saver, thread_id, checkpoint_id, check=check_pruned)

    async def lazy_answer(
        self,
        saver: AsyncSqliteSaver,
        thread_id: str,
        checkpoint_id: str,
        writes: tuple[int, int] | None = None,
    ) -> FinalAnswer:
        """The parts ``SqliteParts`` fetches, decoded (``decoding.decode_parts``);
        ``lazy.Unexpected`` for a shape it leaves to ``full_answer``. ``writes``: the
        head's writes signature, when the head query just read it (a row fetched with
        the same signature is then reused, not read again)."""
        prefetched_writes, row = self._prefetched.pop((thread_id, checkpoint_id), (None, None))
        if writes is None or prefetched_writes != writes:
            row = None
        parts = SqliteParts(saver, thread_id, checkpoint_id, self._history, row)
        return await decode_parts(thread_id, parts)


@dataclass(frozen=True, slots=True)
class _Quiet:
    """What was true when ``token`` and ``mark`` were taken stays true while nothing is
    committed (``SqliteAnswerReader._unchanged``)."""

    signal: ChangeSignal
    token: int
    mark: Mark | None  # the wal-index's, read before the query


@dataclass(frozen=True, slots=True)
class _KnownHead(_Quiet):
    head: Head | None
