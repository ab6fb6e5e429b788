"""A deleted run stays deleted: its later puts are dropped, and the deletion waits for the
puts of it already on their way, so a rollback's deletion is final while the run still
winds down.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata

logger = logging.getLogger(__name__)

# Deleted runs remembered per saver: a cancelled run stops within seconds of its
# rollback, so only the latest few can still write.
REMEMBERED = 4_096
# The longest a deletion waits for a put already on its way (a put takes milliseconds;
# past this the deletion goes on, and rows still arriving make it re-plan).
DRAIN_SECONDS = 30.0


def run_of(config: RunnableConfig, metadata: Mapping[str, Any] | None = None) -> str | None:
    """The run a put or a write belongs to, looked up in the order langgraph-api stamps
    a checkpoint's ``run_id`` from: the put's metadata, the config's metadata, its
    configurable, then the config's own ``run_id`` (a tracing id outside langgraph-api,
    so last)."""
    for source in (
        metadata or {},
        config.get("metadata") or {},
        config.get("configurable") or {},
        config,
    ):
        run_id = source.get("run_id")
        if run_id:
            return str(run_id)
    return None


class DeletedRuns:
    """The runs a saver deleted, and the puts of runs now on their way."""

    def __init__(self, remembered: int = REMEMBERED) -> None:
        self._deleted: OrderedDict[str, None] = OrderedDict()
        self._remembered = remembered
        self._writing: dict[str, int] = {}
        self._idle: dict[str, asyncio.Event] = {}

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._deleted

    @asynccontextmanager
    async def writing(self, run_id: str | None) -> AsyncIterator[bool]:
        """Around one put or write of ``run_id``: ``False`` when the run was deleted
        (drop it); else the put counts as on its way until it is done."""
        if run_id is None:
            yield True
            return
        if run_id in self._deleted:
            yield False
            return
        count = self._writing.get(run_id, 0)
        if not count:
            self._idle[run_id] = asyncio.Event()
        self._writing[run_id] = count + 1
        try:
            yield True
        finally:
            # No await here: a cancelled put must still count itself out.
            self._writing[run_id] -= 1
            if not self._writing[run_id]:
                del self._writing[run_id]
                self._idle.pop(run_id).set()

    async def mark(self, run_ids: Iterable[str]) -> None:
        """Mark the runs deleted, then wait until none of their puts is on its way."""
        runs = list(run_ids)
        for run_id in runs:
            self._deleted[run_id] = None
            self._deleted.move_to_end(run_id)
        while len(self._deleted) > self._remembered:
            self._deleted.popitem(last=False)
        await self.drained(runs)

    async def drained(self, run_ids: Sequence[str]) -> None:
        """Until no put of the runs is on its way (bounded: ``DRAIN_SECONDS``); once
        they are marked, none starts again."""
        runs = list(run_ids)
        pending = [event for run_id in runs if (event := self._idle.get(run_id))]
        if not pending:
            return
        try:
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in pending)), DRAIN_SECONDS)
        except TimeoutError:
            logger.warning("runs %s: puts still on their way after %ss", runs, DRAIN_SECONDS)


class DropsDeletedRuns:
    """Mixin for a checkpoint saver (first in the bases, before the saver's class):
    puts and writes of a run it deleted are dropped.

    langgraph-api does not wait for a cancelled run to stop before deleting its
    checkpoints (``Runs.cancel`` deletes a run nobody streams while only sending it its
    cancel), and the cancelled run's pending puts land afterwards: orphans newer than
    anything else in the thread, which the next run would take as the thread's latest.
    So ``adelete_for_runs`` first marks the runs deleted (from then on their puts and writes
    are dropped), then waits for their puts already started (bounded: ``DRAIN_SECONDS``),
    then deletes what is stored. Marking is per saver (per server process): the runs
    langgraph-api rolls back run in the process that deletes them, and a run is marked only
    when it is deleted, so no other run's write is touched."""

    @property
    def deleted_runs(self) -> DeletedRuns:
        found = self.__dict__.get("_deleted_runs")
        if found is None:
            found = self.__dict__["_deleted_runs"] = DeletedRuns()
        return found

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        run_id = run_of(config, metadata)
        async with self.deleted_runs.writing(run_id) as kept:
            if kept:
                return await super().aput(  # type: ignore[misc]
                    config, checkpoint, metadata, new_versions
                )
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        # langgraph queues a run's puts but not its writes: the next step's writes
        # to this checkpoint may be stored already (before the run was deleted). They
        # go with it, once none of the run's writes is on its way.
        await self.deleted_runs.drained([run_id] if run_id else [])
        await self._delete_writes_of(thread_id, ns, checkpoint["id"])
        # What the saver returns for a put: the run goes on (until its cancel lands)
        # as if the checkpoint were stored and deleted.
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        async with self.deleted_runs.writing(run_of(config)) as kept:
            if kept:
                await super().aput_writes(config, writes, task_id, task_path)  # type: ignore[misc]

    async def _delete_writes_of(self, thread_id: str, ns: str, checkpoint_id: str) -> None:
        """Delete the writes stored for a checkpoint (the saver's own tables)."""
        raise NotImplementedError
