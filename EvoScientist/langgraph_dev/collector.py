"""Keep Python's cyclic garbage collector from stalling the server's event loop.

A ``langgraph dev`` process holds a large heap: everything its imports built, the
graphs, and the in-memory runtime's runs and threads. A full (generation 2) collection
walks all of it and, measured on a 2-core machine during ten concurrent runs, held the
event loop for 140–200 ms several times a minute. Every run and every held request
shares that loop: a run's next step, the server marking a run done, a thousand
long-polls being answered all wait for it.

Two measures, both the standard library's own:

- ``freeze_startup_heap``: once the server has started, what exists then (modules,
  classes, compiled graphs, the server's own structures) is moved to the collector's
  permanent generation (``gc.freeze``), so full collections only walk what was made
  since. Objects alive at startup live as long as the server; any that die later are
  still freed by reference counting, only a cycle among them would stay.
- ``collector_paused``: the few milliseconds in which one poll sends a thousand
  responses (``delivery``) run without collections; any that came due run right after.

``EVOSCIENTIST_GC_FREEZE=0`` turns the first off.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

FREEZE_SETTING = "EVOSCIENTIST_GC_FREEZE"


def freeze_startup_heap() -> int:
    """Collect once, then freeze the survivors; returns how many objects are frozen."""
    if os.environ.get(FREEZE_SETTING, "1").strip().lower() in ("0", "false", "no", "off"):
        return 0
    gc.collect()
    gc.freeze()
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
