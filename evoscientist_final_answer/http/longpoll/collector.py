"""Keep Python's cyclic garbage collector from stalling the server's event loop.

A ``langgraph dev`` process holds a large heap: everything its imports built, the
graphs, the in-memory runtime's runs and threads, and every held long-poll (about a
hundred objects each). With Python's default thresholds a full collection walked all
of it several times a minute, each holding the event loop for 140–200 ms (measured on
a 2-core machine during ten concurrent runs), and the collections that a thousand
arriving long-polls set off cost each of them more than the rest of its handling
(in process: 170–210 µs a request, 57 µs with the collector off). Every run and every
held request shares that loop.

``tune_collector`` (once the server has started), with the standard library's own means:

- ``gc.freeze``: what exists then (modules, classes, compiled graphs, the server's own
  structures) moves to the permanent generation, so full collections only walk what
  was made since. Such objects live as long as the server anyway; one that dies later
  is still freed by reference counting, only a cycle among them would stay.
- ``gc.set_threshold(50_000, 20, 100)``: a young collection after 50,000 new objects
  instead of 700, so most of a request's short-lived objects are freed by reference
  counting before any collection sees them; and a full collection at most every 100
  middle-generation ones (Python's own rule still waits for the old generation to grow
  by a quarter). The attach cost fell back to 60 µs a request; memory held by cyclic
  garbage waits a little longer.

``collector_paused``: the few milliseconds in which one poll sends a thousand responses
(``delivery``) run without collections; any that came due run right after.

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
    frozen (0 when turned off)."""
    if not settings.gc_tuning():
        return 0
    gc.collect()
    gc.freeze()
    gc.set_threshold(*SERVER_THRESHOLDS)
    return gc.get_freeze_count()


@contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
