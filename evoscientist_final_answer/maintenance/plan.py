"""What ``aprune(strategy="keep_latest")`` keeps: pure logic over a thread's rows, keeping
what each ``DeltaChannel`` value of the head is rebuilt from.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.types import TASKS

from evoscientist_final_answer.answer.status import next_nodes

STRATEGIES = ("keep_latest", "delete")
# Checkpoints older than format v4 read their pending sends from their parent's writes.
SENDS_IN_PARENT_BEFORE_VERSION = 4
# Metadata a DeltaChannel leaves: its update counters since the last snapshot
# (LangGraph Python), or the marker LangGraph.js puts on its delta threads.
DELTA_COUNTERS = "counters_since_delta_snapshot"
DELTA_JS_MARKER = "delta_writes_versioned"

# Loads one checkpoint of the thread being pruned: (namespace, checkpoint id) -> tuple.
Loader = Callable[[str, str], Awaitable[CheckpointTuple | None]]


def loader(saver: BaseCheckpointSaver, thread_id: str) -> Loader:
    """The saver's own ``aget_tuple`` for one thread's checkpoints."""

    async def load(ns: str, checkpoint_id: str) -> CheckpointTuple | None:
        configurable = {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
        return await saver.aget_tuple({"configurable": configurable})

    return load


@dataclass(frozen=True)
class Row:
    """One stored checkpoint, as listed without decoding it."""

    ns: str
    checkpoint_id: str
    parent_id: str | None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # Channel -> version it references (PostgreSQL's blobs are keyed by them).
    versions: Mapping[str, str] = field(default_factory=dict)
    # False when the stored metadata is not JSON: the row is reported, never deleted.
    readable: bool = True


class UnreadableRow(Exception):
    """A walk reached a row whose metadata the store cannot parse."""


@dataclass(frozen=True)
class Deletion:
    """One namespace's share of a prune: what goes, and what is left parentless."""

    ns: str
    checkpoint_ids: list[str]
    orphans: list[str]  # kept checkpoints whose parent is deleted
    freed: dict[str, set[str]]  # channel -> versions only deleted checkpoints referenced


def thread_ids_to_prune(thread_ids: Sequence[str], strategy: str) -> list[str]:
    """Validate ``aprune``'s arguments as langgraph's own savers do."""
    if isinstance(thread_ids, str):
        raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown prune strategy: {strategy!r}")
    return [str(t) for t in thread_ids]


def channels_to_seed(checkpoint: Mapping[str, Any], metadata: Mapping[str, Any]) -> set[str]:
    """The delta channels a load of ``checkpoint`` rebuilds from its ancestors: those
    with a version but no stored value (langgraph's ``_delta_channels_to_replay``,
    known here from the metadata instead of the graph's channel specs)."""
    delta = set(metadata.get(DELTA_COUNTERS) or ())
    if metadata.get(DELTA_JS_MARKER):
        delta |= set(checkpoint["channel_versions"])
    values = checkpoint["channel_values"]
    return {c for c in delta if c in checkpoint["channel_versions"] and c not in values}


async def chain_to_keep(ns: str, head: str, load: Loader) -> set[str]:
    """The head and the ancestors its delta channels (and, before format v4, its
    pending sends) are rebuilt from."""
    kept = {head}
    tuple_ = await load(ns, head)
    if tuple_ is None:
        return kept
    parent = _parent_id(tuple_)
    needed = channels_to_seed(tuple_.checkpoint, tuple_.metadata)
    if parent and tuple_.checkpoint["v"] < SENDS_IN_PARENT_BEFORE_VERSION:
        ancestor = await load(ns, parent)
        if ancestor is not None and any(w[1] == TASKS for w in ancestor.pending_writes or ()):
            kept.add(parent)
    while needed and parent:
        ancestor = await load(ns, parent)
        if ancestor is None:
            break
        kept.add(parent)
        needed -= set(ancestor.checkpoint["channel_values"])
        parent = _parent_id(ancestor)
    return kept


def previous_run_head(rows: Sequence[Row], head: CheckpointTuple) -> str | None:
    """While the head's run is unfinished, the newest checkpoint on its chain written
    outside that run: what a rollback of the run leaves as the thread's head."""
    run_id = head.metadata.get("run_id")
    if not run_id or not next_nodes(head.checkpoint["channel_values"]):
        return None
    by_id = {r.checkpoint_id: r for r in rows}
    cursor = _parent_id(head)
    while cursor in by_id:
        row = by_id[cursor]
        if not row.readable or row.metadata.get("run_id") != run_id:
            return cursor
        cursor = row.parent_id
    return None


async def keep_latest(rows: Sequence[Row], load: Loader) -> dict[str, set[str]]:
    """Per namespace, the checkpoint IDs ``keep_latest`` keeps.

    langgraph's ``keep_latest`` keeps the latest checkpoint of each namespace, but a
    ``DeltaChannel`` value is rebuilt by walking the parent chain back to the nearest
    ``_DeltaSnapshot`` and replaying the writes on the way
    (``aget_delta_channel_history``). So for each channel the head must rebuild, the chain
    from the head back to that ancestor is kept, with the writes of every checkpoint on it.
    Also kept where a thread needs them: the parent of a pre-v4 checkpoint holding the
    pending sends it loads, and, while the head's run is unfinished, the newest checkpoint
    of the run before it, so a rollback leaves the thread its previous turn. A row whose
    metadata cannot be parsed is never deleted; its namespace is kept whole when the walk
    would have to read it.

    A subgraph call's namespace (its task ID after a ":") goes whole with the root
    checkpoint the call started from, once that one is saved and not kept; a
    ``checkpointer=True`` subgraph's namespace keeps its latest, as langgraph's
    PostgreSQL ``prune`` does."""
    by_ns = _by_namespace(rows)
    heads = {ns: max(ns_rows, key=lambda r: r.checkpoint_id) for ns, ns_rows in by_ns.items()}
    kept = {ns: await _kept_in(ns, by_ns[ns], heads[ns], load) for ns in by_ns}
    saved_roots = {r.checkpoint_id for r in by_ns.get("", ())}
    for ns, head in heads.items():
        root = (head.metadata.get("parents") or {}).get("")
        if ":" in ns and root in saved_roots and root not in kept.get("", ()):
            kept[ns] = set()
    return kept


async def _kept_in(ns: str, rows: Sequence[Row], head: Row, load: Loader) -> set[str]:
    unreadable = {r.checkpoint_id for r in rows if not r.readable}

    async def guarded(ns: str, checkpoint_id: str) -> CheckpointTuple | None:
        if checkpoint_id in unreadable:
            raise UnreadableRow(checkpoint_id)
        return await load(ns, checkpoint_id)

    try:
        kept = await chain_to_keep(ns, head.checkpoint_id, guarded)
        head_tuple = await guarded(ns, head.checkpoint_id)
        previous = None if head_tuple is None else previous_run_head(rows, head_tuple)
        if previous is not None:
            kept |= await chain_to_keep(ns, previous, guarded)
    except UnreadableRow:
        # What the walk needs past that row is unknown: delete nothing here.
        return {r.checkpoint_id for r in rows}
    return kept | unreadable


def deletions(rows: Iterable[Row], doomed: Callable[[Row], bool]) -> list[Deletion]:
    """Group the rows ``doomed`` picks by namespace, with what their deletion frees
    and leaves parentless. Rows not listed (saved since) are never touched."""
    result = []
    for ns, ns_rows in _by_namespace(rows).items():
        gone = [r for r in ns_rows if doomed(r)]
        if not gone:
            continue
        gone_ids = {r.checkpoint_id for r in gone}
        staying = [r for r in ns_rows if r.checkpoint_id not in gone_ids]
        referenced = {(c, v) for r in staying for c, v in r.versions.items()}
        freed: dict[str, set[str]] = {}
        for r in gone:
            for channel, version in r.versions.items():
                if (channel, version) not in referenced:
                    freed.setdefault(channel, set()).add(version)
        orphans = [r.checkpoint_id for r in staying if r.parent_id in gone_ids]
        result.append(Deletion(ns, sorted(gone_ids), orphans, freed))
    return result


def _by_namespace(rows: Iterable[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row.ns, []).append(row)
    return grouped


def _parent_id(tuple_: CheckpointTuple) -> str | None:
    if tuple_.parent_config is None:
        return None
    return tuple_.parent_config["configurable"].get("checkpoint_id")
