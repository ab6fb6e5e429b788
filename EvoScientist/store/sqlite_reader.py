"""Read a thread's final answer straight from ``sessions.db``.

The file is opened read-only (``mode=ro``): a GET never writes to the store and never
creates it. One long-lived connection serves every request.

Two ways to decode the answering checkpoint, same result (held against each other by
``tests/test_lazy_decoding.py``):

- lazy (first): the blob is parsed without building its messages, the DeltaChannel
  history is walked with the SQL below, and only the newest messages that decide the
  answer are built, with the saver's own serializer hook;
- full (whenever the lazy path meets a shape it does not know): ``AsyncSqliteSaver``
  decodes the checkpoint, its pending writes and its DeltaChannel history, and the
  channel's own reducer replays them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import stat
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiosqlite
from langgraph.checkpoint.base import CheckpointTuple, writes_sort_key
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from EvoScientist.answer.result import FinalAnswer, answer_from_checkpoint
from EvoScientist.answer.status import ERROR_CHANNEL, INTERRUPT_CHANNEL, RESUME_CHANNEL
from EvoScientist.store import lazy
from EvoScientist.store.api_reader import AUTH_USER_KEY
from EvoScientist.store.base import CheckpointAnswerReader, Head
from EvoScientist.store.change_signal import ChangeSignal, change_signal
from EvoScientist.store.errors import CheckpointUnreadable, StoreDamaged, StoreUnavailable
from EvoScientist.store.lru import LruCache
from EvoScientist.store.messages import MESSAGES, is_delta_channel, saver_answer
from EvoScientist.store.watch import ThreadWatch

logger = logging.getLogger(__name__)

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
# is read once per checkpoint and kept (``_CheckpointFacts``), so a repeat poll reads
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
# The parent chain without blobs (cheap: no overflow pages read). Ids are ordered only
# within one process, so the chain follows parent links. CROSS JOIN keeps the chain as
# the outer loop: one primary-key lookup per step. The depth bound ends a chain that
# INSERT OR REPLACE turned into a loop.
_CHAIN_IDS_CTE = """
WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, depth) AS (
  SELECT checkpoint_id, parent_checkpoint_id, 0 FROM checkpoints
  WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?
  UNION ALL
  SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1
  FROM chain CROSS JOIN checkpoints c ON c.checkpoint_id = chain.parent_checkpoint_id
  WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND chain.depth < ?
)
"""
# Ancestors nearest first, each with its blob. The blob is joined to the chain, not
# carried through it: a recursive step copies its row into SQLite's queue, and a
# DeltaChannel snapshot's megabytes copied so cost a first read several times more
# than reading them.
ANCESTORS_SQL = (
    _CHAIN_IDS_CTE
    + """
SELECT chain.checkpoint_id, chain.parent_checkpoint_id, c.type, c.checkpoint
FROM chain CROSS JOIN checkpoints c
WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND c.checkpoint_id = chain.checkpoint_id
"""
)
# Its last parent link: NULL when it reaches the thread's first checkpoint, an id when
# an ancestor was deleted (pruned history).
CHAIN_END_SQL = (
    _CHAIN_IDS_CTE
    + "SELECT checkpoint_id, parent_checkpoint_id FROM chain ORDER BY depth DESC LIMIT 1"
)
# Its ids nearest first: to find a snapshot already decoded.
ANCESTOR_IDS_SQL = _CHAIN_IDS_CTE + "SELECT checkpoint_id FROM chain"
BLOBS_SQL = """
SELECT checkpoint_id, type, checkpoint FROM checkpoints
WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id IN ({ids})
"""
MESSAGE_WRITES_SQL = """
SELECT checkpoint_id, {task_path}, task_id, idx, type, value FROM writes
WHERE thread_id = ? AND checkpoint_ns = '' AND channel = ? AND checkpoint_id IN ({ids})
"""
# A page cache that keeps the primary-key pages warm while large blobs stream through
# (a repeat poll then reads nothing from the file), and blobs read through mmap.
READER_PRAGMAS = ("PRAGMA cache_size = -65536", "PRAGMA mmap_size = 268435456")
WRITES_HAVE_TASK_PATH_SQL = "SELECT 1 FROM pragma_table_info('writes') WHERE name = 'task_path'"
NO_CHECKPOINTS_TABLE = "no such table: checkpoints"

MAX_CHAIN_DEPTH = 100_000
# Checkpoints whose eligibility is remembered, and DeltaChannel snapshots kept decoded
# (id index included) so the next checkpoint of a growing thread replays only its writes.
KNOWN_CHECKPOINTS = 65_536
KEPT_SNAPSHOTS = 4
# Heads remembered with the change token they were read under.
KNOWN_HEADS = 4096
PREFETCHED_ROWS = 8
# How long a read waits on a writer's lock before giving up on this path.
BUSY_TIMEOUT_SECONDS = 1.0
# The watch's safety net under the change signal: check again this often regardless.
WATCH_IDLE_SECONDS = 5.0


def read_only_uri(path: Path) -> str:
    return f"file:{quote(str(path.resolve()))}?mode=ro"


class SqliteAnswerReader(CheckpointAnswerReader):
    """One long-lived read-only connection to ``sessions.db``, reopened after failures."""

    def __init__(self, path: Path, agent_name: str, *, lazy_decoding: bool = True) -> None:
        super().__init__(agent_name)
        self.path = path
        self.lazy_decoding = lazy_decoding
        self._saver: AsyncSqliteSaver | None = None
        self._conn: aiosqlite.Connection | None = None
        self._open_lock = asyncio.Lock()
        self._identity: tuple[int, int] | None = None  # the file the connection reads
        # Requests using each connection, and connections replaced after a failure:
        # one is closed only once no request still reads through it.
        self._users: dict[AsyncSqliteSaver, int] = {}
        self._retired: set[AsyncSqliteSaver] = set()
        self._change: ChangeSignal | None = None
        self._known: LruCache[tuple[str, str], _CheckpointFacts] = LruCache(KNOWN_CHECKPOINTS)
        self._prefetched: LruCache[tuple[str, str], Any] = LruCache(PREFETCHED_ROWS)
        self._seeds: LruCache[tuple[str, str], lazy.Seed] = LruCache(KEPT_SNAPSHOTS)
        self._heads: LruCache[tuple[str, str | None, str | None], _KnownHead] = LruCache(
            KNOWN_HEADS
        )
        self.watch = ThreadWatch(
            self._watch_heads, self._until_changed, idle_cap=WATCH_IDLE_SECONDS
        )
        self._watch_token = 0

    # -- connection ---------------------------------------------------------------

    async def _open(self) -> AsyncSqliteSaver:
        async with self._open_lock:
            if self._saver is not None:
                return self._saver
            identity = _file_identity(self.path)
            if identity is None:
                raise StoreUnavailable(f"{self.path} does not exist")
            conn = await aiosqlite.connect(
                read_only_uri(self.path), uri=True, timeout=BUSY_TIMEOUT_SECONDS
            )
            try:
                saver = AsyncSqliteSaver(conn)
                # setup() would switch journal modes and create tables: writes. The
                # schema is the writer's business; learn the one thing it decides.
                async with conn.execute(WRITES_HAVE_TASK_PATH_SQL) as cur:
                    saver._has_task_path = await cur.fetchone() is not None
                for pragma in READER_PRAGMAS:  # per connection; nothing is written
                    await conn.execute(pragma)
                saver.is_setup = True
            except BaseException:
                await conn.close()
                raise
            self._conn, self._saver, self._identity = conn, saver, identity
            return saver

    async def close(self) -> None:
        await self.watch.close()
        if self._change is not None:
            self._change.close()
            self._change = None
        async with self._open_lock:
            conn, self._conn, self._saver = self._conn, None, None
            retired, self._retired = self._retired, set()
        for old in retired:
            await old.conn.close()
        if conn is not None:
            await conn.close()

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[AsyncSqliteSaver]:
        """The saver, with every failure to read the file turned into
        ``StoreUnavailable``.

        A busy store (another process's lock) leaves the connection as it is; any other
        failure retires it — the next request opens a fresh one, and the old one is
        closed once the requests still reading through it are done (closing it under
        them would fail them too).
        """
        try:
            saver = await self._open()
        except (StoreUnavailable, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise _unavailable(exc) from exc
        self._users[saver] = self._users.get(saver, 0) + 1
        try:
            yield saver
        except (StoreUnavailable, asyncio.CancelledError):
            raise
        except Exception as exc:
            if not _busy(exc):
                await self._retire(saver)
            raise _unavailable(exc) from exc
        finally:
            self._users[saver] -= 1
            if not self._users[saver]:
                del self._users[saver]
                if saver in self._retired:
                    self._retired.discard(saver)
                    await saver.conn.close()

    async def _follow_replaced_file(self) -> None:
        """A connection keeps reading the file it opened, even once another file has
        been renamed over its path (a restored backup) or it has been deleted: then the
        next request opens whatever is at the path now."""
        saver = self._saver
        if saver is None or _file_identity(self.path) == self._identity:
            return
        logger.warning("%s was replaced or removed; reopening", self.path)
        await self._retire(saver)
        # Everything learnt was learnt from the old file.
        self.forget_answers()
        self._known.clear()
        self._prefetched.clear()
        self._seeds.clear()

    async def _retire(self, saver: AsyncSqliteSaver) -> None:
        """The next request opens a fresh connection; this one is closed now if no
        request reads through it, else by the last one that does (``_session``)."""
        async with self._open_lock:
            if self._saver is not saver:
                return
            self._conn, self._saver = None, None
            if self._users.get(saver):
                self._retired.add(saver)
                return
        await saver.conn.close()

    async def _fetch(
        self, saver: AsyncSqliteSaver, sql: str, params: Sequence[Any]
    ) -> list[sqlite3.Row]:
        # One trip to aiosqlite's thread (execute, fetch and close in one call): each
        # trip costs two wake-ups, which dominate a cached poll.
        async with saver.lock:
            return list(await saver.conn.execute_fetchall(sql, params))

    # -- CheckpointAnswerReader -------------------------------------------------

    async def head(
        self, thread_id: str, run_id: str | None, user_id: str | None = None
    ) -> Head | None:
        """The head, without a query when the change signal vouches that nothing was
        written since it was last read (a repeat poll then costs no trip to the file)."""
        key = (thread_id, run_id, user_id)
        known = self._heads.get(key)
        if (
            known is not None
            and known.signal is self._change
            and known.signal.quiet_since(known.token)
        ):
            return known.head
        await self._follow_replaced_file()
        async with self._session() as saver:
            signal = self._signal()
            token = signal.token()  # before the query: a commit during it is not quiet
            try:
                head = await self._eligible_head(saver, thread_id, run_id, user_id)
            except sqlite3.OperationalError as exc:
                if NO_CHECKPOINTS_TABLE not in str(exc):
                    raise
                head = None  # a store nothing has been written to holds no thread
        self._heads.put(key, _KnownHead(signal, token, head))
        return head

    async def _eligible_head(
        self, saver: AsyncSqliteSaver, thread_id: str, run_id: str | None, user_id: str | None
    ) -> Head | None:
        below = _AFTER_NEWEST
        while True:
            rows = await self._fetch(saver, HEAD_IDS_SQL, (thread_id, below, HEAD_PAGE))
            if below is _AFTER_NEWEST:  # the thread's newest: the watch's token
                self.watch.remember(thread_id, tuple(rows[0]) if rows else None)
            for checkpoint_id, count, last_rowid in rows:
                facts = await self._facts(saver, thread_id, checkpoint_id, (count, last_rowid))
                if facts is not None and facts.answers(self.agent_name, run_id, user_id):
                    return Head(checkpoint_id, (count, last_rowid))
            if len(rows) < HEAD_PAGE:
                return None
            below = rows[-1][0]

    async def _facts(
        self,
        saver: AsyncSqliteSaver,
        thread_id: str,
        checkpoint_id: str,
        writes: tuple[int, int] | None = None,
    ) -> _CheckpointFacts | None:
        key = (thread_id, checkpoint_id)
        facts = self._known.get(key)
        if facts is None:
            # The whole row: metadata sits behind the blob anyway, and the head is
            # usually decoded next (``_prefetched`` hands the row over).
            rows = await self._fetch(saver, CHECKPOINT_SQL, key)
            if not rows:
                return None  # deleted since the ids were read
            facts = _CheckpointFacts.of(rows[0][2])
            self._known.put(key, facts)
            self._prefetched.put(key, (writes, rows[0]))
        return facts

    async def answer(self, thread_id: str, head: Head) -> FinalAnswer:
        async with self._session() as saver:
            try:
                if self.lazy_decoding:
                    try:
                        return await self.lazy_answer(
                            saver, thread_id, head.checkpoint_id, head.writes
                        )
                    except lazy.Unexpected as exc:
                        logger.debug("thread %s: full decode (%s)", thread_id, exc)
                return await self.full_answer(saver, thread_id, head.checkpoint_id)
            except (StoreUnavailable, sqlite3.Error, OSError, asyncio.CancelledError):
                raise
            except Exception as exc:
                if _connection_gone(exc):
                    raise
                # The file was read; what it holds cannot be decoded by this process.
                raise CheckpointUnreadable(
                    f"checkpoint {head.checkpoint_id}: {type(exc).__name__}: {exc}"
                ) from exc

    def forget_answers(self) -> None:
        super().forget_answers()
        self._heads.clear()

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
        async with self._session() as saver:
            self._watch_token = self._signal().token()  # before the query, as for a read
            try:
                rows = await self._fetch(saver, WATCH_SQL, (json.dumps(thread_ids),))
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
        return await saver_answer(saver, thread_id, checkpoint_id, check=self._check_pruned)

    async def _check_pruned(self, saver: AsyncSqliteSaver, tup: CheckpointTuple) -> None:
        if MESSAGES not in tup.checkpoint.get("channel_values", {}) and is_delta_channel(
            tup.metadata
        ):
            await self._check_chain(saver, tup)

    async def lazy_answer(
        self,
        saver: AsyncSqliteSaver,
        thread_id: str,
        checkpoint_id: str,
        writes: tuple[int, int] | None = None,
    ) -> FinalAnswer:
        """``writes``: the head's writes signature, when the head query just read it (a
        row fetched with the same signature is then reused, not read again)."""
        hook = getattr(saver.serde, "_unpack_ext_hook", None)
        if hook is None:
            raise lazy.Unexpected(f"serializer {type(saver.serde).__name__} has no ext hook")
        prefetched_writes, row = self._prefetched.pop((thread_id, checkpoint_id), (None, None))
        if row is None or writes is None or prefetched_writes != writes:
            rows = await self._fetch(saver, CHECKPOINT_SQL, (thread_id, checkpoint_id))
            if not rows:
                raise StoreUnavailable(f"checkpoint {checkpoint_id} vanished while reading")
            row = rows[0]
        type_, blob, metadata_blob, parent_id, status_json = row
        checkpoint = _parse_msgpack(type_, blob)
        raw_values = checkpoint.get("channel_values")
        if not isinstance(raw_values, dict):
            raise lazy.Unexpected("checkpoint without channel_values")
        metadata = json.loads(metadata_blob) if metadata_blob is not None else {}
        channel_values = {
            name: lazy.materialize(value, hook)
            for name, value in raw_values.items()
            if name != MESSAGES
        }
        pending_writes = [
            (task_id, channel, saver.serde.loads_typed((wtype, bytes.fromhex(value or ""))))
            for task_id, channel, wtype, value in json.loads(status_json or "[]")
        ]
        if MESSAGES in raw_values:
            entries = lazy.messages_value(raw_values[MESSAGES])
        elif is_delta_channel(metadata) and parent_id:
            entries = await self._delta_entries(saver, thread_id, parent_id)
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
        self, saver: AsyncSqliteSaver, thread_id: str, parent_id: str
    ) -> Sequence[Any]:
        """The DeltaChannel's value at a checkpoint: the nearest stored value up the
        parent chain, then every write since (the checkpoint's own excluded)."""
        known = await self._known_seed(saver, thread_id, parent_id)
        if known is not None:
            chain, seed = known
        else:
            chain, seed = await self._walk_to_seed(saver, thread_id, parent_id)
        position = {checkpoint_id: -depth for depth, checkpoint_id in enumerate(chain)}
        task_path = "task_path" if saver._has_task_path else "''"
        sql = MESSAGE_WRITES_SQL.format(task_path=task_path, ids=",".join("?" * len(chain)))
        rows = await self._fetch(saver, sql, (thread_id, MESSAGES, *chain))
        # Oldest checkpoint first; within one, the order live execution applied them.
        rows.sort(key=lambda r: (position[r[0]], writes_sort_key(r[1], r[2], r[3])))
        batches = [lazy.write_entries(_parse_msgpack(wtype, value)) for *_, wtype, value in rows]
        return lazy.replay(seed, batches)

    async def _walk_to_seed(
        self, saver: AsyncSqliteSaver, thread_id: str, parent_id: str
    ) -> tuple[list[str], lazy.Seed]:
        """Ancestors nearest first, blobs parsed as they come, up to the nearest one
        holding the channel's value (the seed); that snapshot is kept decoded."""
        chain: list[str] = []
        seed: lazy.Seed | None = None
        missing: str | None = parent_id  # the first link with no row behind it
        async with (
            saver.lock,
            saver.conn.execute(
                ANCESTORS_SQL, (thread_id, parent_id, thread_id, MAX_CHAIN_DEPTH, thread_id)
            ) as cur,
        ):
            async for ancestor_id, ancestor_parent, type_, blob in cur:
                if ancestor_id in chain:
                    missing = None
                    break  # a loop: the walk has seen everything it can
                chain.append(ancestor_id)
                missing = ancestor_parent
                values = _parse_msgpack(type_, blob).get("channel_values") or {}
                if MESSAGES in values:
                    seed = lazy.seed_of(values[MESSAGES])
                    self._seeds.put((thread_id, ancestor_id), seed)
                    break
        if seed is None:
            if missing is not None and len(chain) < MAX_CHAIN_DEPTH + 1:
                raise pruned_history(missing)
            seed = lazy.Seed([])
        return chain, seed

    async def _known_seed(
        self, saver: AsyncSqliteSaver, thread_id: str, parent_id: str
    ) -> tuple[list[str], lazy.Seed] | None:
        """The chain up to a snapshot decoded on an earlier read, if the walk meets one
        before any newer snapshot: then only the small blobs in between are read."""
        if not any(key[0] == thread_id for key in self._seeds):
            return None
        chain: list[str] = []
        seed: lazy.Seed | None = None
        async with (
            saver.lock,
            saver.conn.execute(
                ANCESTOR_IDS_SQL, (thread_id, parent_id, thread_id, MAX_CHAIN_DEPTH)
            ) as cur,
        ):
            async for (ancestor_id,) in cur:
                if ancestor_id in chain:
                    return None
                chain.append(ancestor_id)
                seed = self._seeds.get((thread_id, ancestor_id))
                if seed is not None:
                    break
        if seed is None:
            return None
        between = chain[:-1]
        if between:
            sql = BLOBS_SQL.format(ids=",".join("?" * len(between)))
            rows = await self._fetch(saver, sql, (thread_id, *between))
            blobs = {checkpoint_id: (type_, blob) for checkpoint_id, type_, blob in rows}
            for depth, checkpoint_id in enumerate(between):
                if checkpoint_id not in blobs:
                    return None  # changed under us: walk the slow way
                values = _parse_msgpack(*blobs[checkpoint_id]).get("channel_values") or {}
                if MESSAGES in values:  # a newer snapshot than the one kept
                    newer = lazy.seed_of(values[MESSAGES])
                    self._seeds.put((thread_id, checkpoint_id), newer)
                    return chain[: depth + 1], newer
        return chain, seed

    async def _check_chain(self, saver: AsyncSqliteSaver, tup: CheckpointTuple) -> None:
        """Raise when the saver rebuilt a DeltaChannel without a snapshot because an
        ancestor is gone: langgraph's own walk stops there silently, with part of the
        history, and an answer read from part of it may be the wrong one."""
        history = await saver.aget_delta_channel_history(config=tup.config, channels=[MESSAGES])
        if "seed" in history[MESSAGES] or tup.parent_config is None:
            return
        thread_id = tup.config["configurable"]["thread_id"]
        parent_id = tup.parent_config["configurable"]["checkpoint_id"]
        rows = await self._fetch(
            saver, CHAIN_END_SQL, (thread_id, parent_id, thread_id, MAX_CHAIN_DEPTH)
        )
        missing = rows[0][1] if rows else parent_id
        if missing is not None:
            raise pruned_history(missing)


@dataclass(frozen=True, slots=True)
class _KnownHead:
    signal: ChangeSignal
    token: int
    head: Head | None


@dataclass(frozen=True, slots=True)
class _CheckpointFacts:
    """What decides whether a checkpoint may answer; metadata never changes once written."""

    agent_name: str | None
    run_id: str | None
    user_id: str | None

    @classmethod
    def of(cls, metadata_blob: bytes | str | None) -> _CheckpointFacts:
        try:
            metadata = json.loads(metadata_blob) if metadata_blob is not None else {}
        except ValueError:
            metadata = {}
        if not isinstance(metadata, dict):
            metadata = {}

        def text(key: str) -> str | None:
            value = metadata.get(key)
            return None if value is None else str(value)

        return cls(text("agent_name"), text("run_id"), text(AUTH_USER_KEY))

    def answers(self, agent_name: str, run_id: str | None, user_id: str | None) -> bool:
        return (
            self.agent_name in (None, agent_name)
            and (run_id is None or self.run_id == run_id)
            and (user_id is None or self.user_id == user_id)
        )


def pruned_history(missing: str) -> CheckpointUnreadable:
    return CheckpointUnreadable(
        f"message history pruned before any snapshot (ancestor {missing} is gone)"
    )


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def _busy(exc: BaseException) -> bool:
    """Another connection holds the lock this read needs: the connection is fine."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "is locked" in str(exc)


def _damaged(exc: BaseException) -> bool:
    """The file is not a database, or its pages do not hold together: no retry heals
    that (a truncated copy, a disk error), unlike a lock."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or any(
        text in str(exc) for text in ("file is not a database", "disk image is malformed")
    )


def _unavailable(exc: Exception) -> StoreUnavailable:
    error = StoreDamaged if _damaged(exc) else StoreUnavailable
    return error(f"{type(exc).__name__}: {exc}")


def _connection_gone(exc: Exception) -> bool:
    """aiosqlite's own errors for a connection closed under a read (a reset elsewhere)."""
    return isinstance(exc, ValueError) and str(exc) in ("Connection closed", "no active connection")


def _parse_msgpack(type_: str, blob: bytes) -> Any:
    if type_ != "msgpack":
        raise lazy.Unexpected(f"{type_!r} blob")
    try:
        return lazy.parse(blob)
    except Exception as exc:  # ormsgpack raises its own error types
        raise lazy.Unexpected(f"unparseable blob: {exc}") from exc
