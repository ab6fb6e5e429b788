"""Garbage-collector tuning for a langgraph server: Python's default thresholds make full
collections walk the server's large heap often enough to stall the event loop that every
run and held request shares (figures: docs/final-answer.md).
``EVOSCIENTIST_GC_TUNING=0`` leaves the collector as Python sets it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from evoscientist_final_answer import settings

SERVER_THRESHOLDS = (50_000, 20, 100)


def tune_collector() -> int:
    """Freeze the started heap and raise the thresholds; returns how many objects are
    frozen (0 when turned off). Call once the server has started.

    ``gc.freeze`` moves what exists then (modules, compiled graphs, the server's own
    structures) to the permanent generation: they live as long as the server anyway,
    and one that dies later is still freed by reference counting. ``SERVER_THRESHOLDS``
    collects the young generation after 50,000 new objects instead of 700, so most of a
    request's short-lived objects are freed by reference counting first, and a full
    collection runs at most every 100 middle-generation ones."""
    if not settings.gc_tuning():
        return 0
    gc.collect()
    gc.freeze()
    gc.set_threshold(*SERVER_THRESHOLDS)
    return gc.get_freeze_count()


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collection while one poll sends its held responses (``longpoll.delivery``):
    a few milliseconds; any collection that came due runs right after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
