"""The collector settings the server starts with (``langgraph_dev/collector.py``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from EvoScientist.langgraph_dev.collector import collector_paused, freeze_startup_heap


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # this test process's heap stays collectable


def test_the_started_heap_is_frozen(unfrozen: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVOSCIENTIST_GC_FREEZE", raising=False)
    frozen = freeze_startup_heap()
    assert frozen > 0 and gc.get_freeze_count() == frozen


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_freezing_can_be_turned_off(
    unfrozen: None, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("EVOSCIENTIST_GC_FREEZE", value)
    assert freeze_startup_heap() == 0 and gc.get_freeze_count() == 0


def test_collections_pause_only_while_inside() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()  # someone else turned it off: it stays off
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
