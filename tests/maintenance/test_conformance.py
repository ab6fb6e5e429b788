"""LangGraph's own checkpoint-saver suite (``langgraph-checkpoint-conformance``) on the
savers ``langgraph.json``'s factory yields, both backends: every capability they claim
passes (``FULL``), ``prune`` included.

Our stricter guarantees (a ``DeltaChannel`` chain a head needs survives
``keep_latest``; the route answers the same after pruning; no maintenance changes what a
surviving checkpoint decodes to) are in ``tests/maintenance/test_maintenance.py`` and
``tests/maintenance/test_invariant.py``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability

from EvoScientist.checkpointer import sessions_checkpointer
from tests.support.seeds import Store

pytestmark = pytest.mark.backends("sqlite", "postgres")


async def test_the_factory_saver_conforms_fully(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    if store.backend == "postgres":
        monkeypatch.setenv("EVOSCIENTIST_DATABASE_URI", store.uri)
    else:
        monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", os.fspath(store.path.parent))

    @checkpointer_test(name=f"evoscientist-{store.backend}")
    async def factory_saver() -> AsyncIterator[BaseCheckpointSaver]:
        async with sessions_checkpointer() as saver:
            yield saver

    report = await validate(factory_saver)

    failures = {cap: r.failures for cap, r in report.results.items() if r.failures}
    assert failures == {}
    assert {cap for cap, r in report.results.items() if r.detected} == {c.value for c in Capability}
    assert report.conformance_level() == "FULL"
