"""upstream's checkpointer factory with our maintenance mixed into its saver class, as
docs/upstream-adoption.md suggests upstream do in its ``sessions.py`` (the test server's
``checkpointer.path`` names this file; the factory's body stays upstream's own).

``SCRIPTED_PUT_DELAY`` (seconds) makes each checkpoint put of upstream's saver take that
long, as on a busy disk: langgraph chains a run's puts behind one another, so a run
that steps faster than its puts land always has some on their way, and they land after
the run was cancelled. The rollback test uses it to make that window certain."""

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from EvoScientist import sessions
from evoscientist_final_answer.maintenance.sqlite import SqliteMaintenance

PUT_DELAY = float(os.environ.get("SCRIPTED_PUT_DELAY", "0"))


class SlowPuts:
    """Between our maintenance and upstream's saver: the delay is part of a put."""

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        if PUT_DELAY:
            await asyncio.sleep(PUT_DELAY)
        return await super().aput(*args, **kwargs)  # type: ignore[misc]


class MaintainedApiPruningCheckpointer(
    SqliteMaintenance, SlowPuts, sessions._ApiPruningCheckpointer
):
    """upstream's saver (its stamps, its pruning) with ``aprune``, ``adelete_for_runs``
    and ``acopy_thread``."""


@asynccontextmanager
async def create_checkpointer_for_langgraph_api() -> AsyncIterator[Any]:
    # upstream's factory names its class when it opens the saver: the class in its
    # bases is swapped for that call only.
    sessions._ApiPruningCheckpointer = MaintainedApiPruningCheckpointer
    async with sessions.create_checkpointer_for_langgraph_api() as saver:
        yield saver
