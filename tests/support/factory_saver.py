"""The saver ``langgraph.json``'s checkpointer factory (the demo's
``sessions_checkpointer``) yields for a test's store: what writes, rolls back and prunes
inside langgraph-api."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from EvoScientist.checkpointer import sessions_checkpointer
from tests.support.seeds import Store


@asynccontextmanager
async def factory_saver(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BaseCheckpointSaver]:
    if store.backend == "postgres":
        monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", store.uri)
    else:
        monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(store.path.parent))
    async with sessions_checkpointer() as saver:
        yield saver
