"""The garbage-collector settings the server starts with (``http/gc_tuning.py``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from evoscientist_final_answer.http.gc_tuning import (
    SERVER_THRESHOLDS,
    collector_paused,
    tune_collector,
)


@pytest.fixture
def untuned() -> Iterator[None]:
    """This test process's collector as it was, before and after."""
    thresholds = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_the_started_heap_is_frozen_and_the_thresholds_raised(
    untuned: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVOSCIENTIST_GC_TUNING", raising=False)
    frozen = tune_collector()
    # Frozen objects may be freed afterwards (by this test's or another thread's last
    # reference going), never added: the count only falls from what was frozen.
    assert frozen > 0 and 0 < gc.get_freeze_count() <= frozen
    assert gc.get_threshold() == SERVER_THRESHOLDS


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_tuning_can_be_turned_off(
    untuned: None, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    before = gc.get_threshold()
    monkeypatch.setenv("EVOSCIENTIST_GC_TUNING", value)
    assert tune_collector() == 0 and gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


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
