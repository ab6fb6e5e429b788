"""upstream's checkpointer factory with our maintenance mixed into its saver class, as
docs/upstream-adoption.md suggests upstream do in its ``sessions.py`` (the test server's
``checkpointer.path`` names this file; the factory's body stays upstream's own)."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from EvoScientist import sessions
from evoscientist_final_answer.maintenance.sqlite import SqliteMaintenance


class MaintainedApiPruningCheckpointer(SqliteMaintenance, sessions._ApiPruningCheckpointer):
    """upstream's saver (its stamps, its pruning) with ``aprune``, ``adelete_for_runs``
    and ``acopy_thread``."""


@asynccontextmanager
async def create_checkpointer_for_langgraph_api() -> AsyncIterator[Any]:
    # upstream's factory names its class when it opens the saver: the class in its
    # bases is swapped for that call only.
    sessions._ApiPruningCheckpointer = MaintainedApiPruningCheckpointer
    async with sessions.create_checkpointer_for_langgraph_api() as saver:
        yield saver
