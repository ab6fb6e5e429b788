"""``adelete_for_runs`` without losing what the surviving checkpoints decode to, when an
older run's deletion cuts the parent chain of the checkpoints after it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langgraph._internal._typing import MISSING
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph.message import _messages_delta_reducer

from evoscientist_final_answer.maintenance.gate import DeletedRuns
from evoscientist_final_answer.maintenance.plan import Row, channels_to_seed

logger = logging.getLogger(__name__)

Reducer = Callable[[Any, Sequence[Any]], Any]
# The delta channels a re-parented checkpoint can be re-materialised for: the agent's
# messages, reduced as the final-answer route reduces them.
DELTA_REDUCERS: Mapping[str, Reducer] = {"messages": _messages_delta_reducer}
# A thread that gains a checkpoint after a deleted one between the plan and its
# application is planned again, this many times at most (the deleted runs' own puts
# are dropped by then: only a put on its way past ``gate.DRAIN_SECONDS`` can).
PLAN_ATTEMPTS = 3


class MaintenanceRefused(ValueError):
    """A deletion would change what a surviving checkpoint decodes to; nothing of the
    threads named was deleted."""


@dataclass(frozen=True)
class Reparent:
    """A surviving checkpoint whose parent is deleted: its new parent, and the delta
    channels stored in it from now on (channel -> (its version there, the snapshot))."""

    ns: str
    checkpoint_id: str
    parent_id: str | None
    snapshots: dict[str, tuple[str, _DeltaSnapshot]] = field(default_factory=dict)


@dataclass(frozen=True)
class RollbackPlan:
    """One thread's deletion. The first surviving checkpoint after the gap is re-parented to
    the nearest surviving ancestor, and each delta channel it rebuilds from the deleted
    checkpoints' writes is re-materialised there first as a ``_DeltaSnapshot`` (the value
    langgraph's own walk gives it), so every surviving checkpoint decodes as before.
    Rebuilding needs the channel's reducer, which lives in the graph: the savers know the
    agent's (``DELTA_REDUCERS``). A deletion that would need another, or whose checkpoint
    after the gap cannot be read, is refused for that thread (``MaintenanceRefused``)
    rather than left to rebuild short."""

    thread_id: str
    doomed: dict[str, list[str]]  # namespace -> checkpoint IDs to delete
    reparents: list[Reparent]
    freed: dict[str, dict[str, set[str]]]  # namespace -> channel -> blob versions


class RunStore(Protocol):
    """What a saver gives the rollback: its rows, read without decoding them, and the
    runs it deleted (``gate``)."""

    @property
    def deleted_runs(self) -> DeletedRuns: ...

    async def _run_rows(self, run_ids: Sequence[str]) -> dict[str, list[Row]]:
        """Per thread, the rows whose metadata names one of the runs (by index)."""
        ...

    async def _later_rows(self, thread_id: str, ns: str, after: str) -> list[Row]:
        """The namespace's rows newer than ``after`` (its primary key's range)."""
        ...

    async def _row_versions(self, thread_id: str, ns: str, ids: Sequence[str]) -> dict[str, Row]:
        """The rows ``ids`` with their channel versions (PostgreSQL's blob keys)."""
        ...

    async def _apply_rollback(self, plan: RollbackPlan) -> bool:
        """Apply ``plan`` in one transaction if the children it planned for are still
        the only ones; ``False`` (nothing changed) otherwise."""
        ...

    async def _mark_deleted(self, run_ids: Sequence[str]) -> None:
        """Mark the runs deleted in the store (``store.deleted_runs``), for every
        reader of it to see."""
        ...


async def delete_runs(saver: Any, run_ids: Sequence[str], reducers: Mapping[str, Reducer]) -> None:
    """``adelete_for_runs`` for a saver that is a ``RunStore``: the runs marked
    deleted first, so none of their puts lands after this (``gate``), and in the store,
    so every server reading it answers them as deleted once their rows are gone (a
    reader looks for the mark only when it finds no row of the run); then each thread
    planned and applied on its own; refusals raised together once the rest is done."""
    runs = [str(r) for r in run_ids]
    if not runs:
        return
    await saver.deleted_runs.mark(runs)
    await saver._mark_deleted(runs)
    refused: list[str] = []
    for thread_id, rows in (await saver._run_rows(runs)).items():
        try:
            for attempt in range(PLAN_ATTEMPTS):
                if attempt:  # a run's rows may have grown since the last plan
                    rows = (await saver._run_rows(runs)).get(thread_id, [])
                plan = await plan_rollback(saver, thread_id, rows, reducers)
                if await saver._apply_rollback(plan):
                    break
            else:
                raise MaintenanceRefused(
                    f"thread {thread_id}: checkpoints kept being added after the runs' own"
                )
        except MaintenanceRefused as refusal:
            logger.warning("adelete_for_runs refused: %s", refusal)
            refused.append(str(refusal))
    if refused:
        raise MaintenanceRefused("; ".join(refused))


async def plan_rollback(
    saver: Any, thread_id: str, rows: Sequence[Row], reducers: Mapping[str, Reducer]
) -> RollbackPlan:
    doomed: dict[str, list[str]] = {}
    reparents: list[Reparent] = []
    freed: dict[str, dict[str, set[str]]] = {}
    by_ns: dict[str, list[Row]] = {}
    for row in rows:
        by_ns.setdefault(row.ns, []).append(row)
    for ns, ns_rows in by_ns.items():
        gone = {r.checkpoint_id: r for r in ns_rows}
        doomed[ns] = sorted(gone)
        later = [
            r
            for r in await saver._later_rows(thread_id, ns, min(gone))
            if r.checkpoint_id not in gone
        ]
        for child in (r for r in later if r.parent_id in gone):
            ancestor = nearest_survivor(child.parent_id, gone)
            snapshots = await rematerialise(saver, thread_id, ns, child.checkpoint_id, reducers)
            reparents.append(Reparent(ns, child.checkpoint_id, ancestor, snapshots))
        outside = {r.parent_id for r in ns_rows if r.parent_id and r.parent_id not in gone}
        parents = await saver._row_versions(thread_id, ns, sorted(outside))
        freed[ns] = freed_versions(ns_rows, parents, later)
    return RollbackPlan(thread_id, doomed, reparents, freed)


def nearest_survivor(parent_id: str | None, gone: Mapping[str, Row]) -> str | None:
    """The first ancestor, from ``parent_id`` up, that is not deleted."""
    seen: set[str] = set()
    while parent_id in gone and parent_id not in seen:
        seen.add(parent_id)
        parent_id = gone[parent_id].parent_id
    return parent_id


async def rematerialise(
    saver: BaseCheckpointSaver,
    thread_id: str,
    ns: str,
    checkpoint_id: str,
    reducers: Mapping[str, Reducer],
) -> dict[str, tuple[str, _DeltaSnapshot]]:
    """The delta channels ``checkpoint_id`` rebuilds from its ancestors, each as the
    snapshot of the value langgraph's walk gives it now, with its version there."""
    where = f"thread {thread_id}, checkpoint {checkpoint_id} (namespace {ns!r})"
    config = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }
    try:
        tuple_ = await saver.aget_tuple(config)
    except Exception as exc:
        raise MaintenanceRefused(f"{where}, after a deleted run, cannot be read: {exc}") from exc
    if tuple_ is None:
        raise MaintenanceRefused(f"{where}, after a deleted run, is gone")
    channels = sorted(channels_to_seed(tuple_.checkpoint, tuple_.metadata))
    unknown = [c for c in channels if c not in reducers]
    if unknown:
        raise MaintenanceRefused(
            f"{where} rebuilds delta channels {unknown} from a deleted run's writes, "
            "and no reducer is known to re-materialise them"
        )
    if not channels:
        return {}
    history = await saver.aget_delta_channel_history(config=config, channels=channels)
    snapshots = {}
    for channel in channels:
        spec = DeltaChannel(reducers[channel])
        spec.key = channel
        rebuilt = spec.from_checkpoint(history[channel].get("seed", MISSING))
        rebuilt.replay_writes(history[channel]["writes"])
        version = str(tuple_.checkpoint["channel_versions"][channel])
        snapshots[channel] = (version, _DeltaSnapshot(rebuilt.get()))
    return snapshots


def freed_versions(
    gone: Sequence[Row], outside_parents: Mapping[str, Row], later: Sequence[Row]
) -> dict[str, set[str]]:
    """Blob versions the deleted rows introduced that no later surviving row uses.

    A version an older row introduced stays that row's; one introduced by a deleted
    row can only be referenced by rows after it."""
    by_id = {r.checkpoint_id: r for r in gone} | dict(outside_parents)
    referenced = {(c, v) for r in later for c, v in r.versions.items()}
    freed: dict[str, set[str]] = {}
    for row in gone:
        parent = by_id.get(row.parent_id) if row.parent_id else None
        if row.parent_id and parent is None:
            continue  # its parent is gone already: what it introduced is unknown
        before = parent.versions if parent is not None else {}
        for channel, version in row.versions.items():
            if before.get(channel) != version and (channel, version) not in referenced:
                freed.setdefault(channel, set()).add(version)
    return freed
