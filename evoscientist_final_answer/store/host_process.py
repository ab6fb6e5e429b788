"""What this process is: a langgraph API server or not, and whether that server keeps its
threads and runs in the in-memory runtime's own tables (``langgraph dev``), which can
then be read directly.
"""

from __future__ import annotations

import os
import sys
from typing import Any

SERVER_MODULE = "langgraph_api.server"
RUNTIME_EDITION = "inmem"
RUNTIME_MODULE = "langgraph_runtime_inmem.database"


def inside_langgraph_server() -> bool:
    """True when this process is a langgraph API server (``langgraph dev`` or deployed)."""
    return SERVER_MODULE in sys.modules


class RuntimeUnavailable(Exception):
    """This process holds no in-memory runtime table to read."""


def runtime_table(name: str = "threads") -> list[dict[str, Any]]:
    """One of the in-memory runtime's tables, when this process serves from one."""
    if os.environ.get("LANGGRAPH_RUNTIME_EDITION") != RUNTIME_EDITION:
        raise RuntimeUnavailable("not the in-memory runtime")
    database = sys.modules.get(RUNTIME_MODULE)
    store = getattr(database, "GLOBAL_STORE", None)
    table = store.get(name) if isinstance(store, dict) else None
    if not isinstance(table, list):
        raise RuntimeUnavailable(f"no {name} table")
    return table


def runtime_readable() -> bool:
    """This process serves from the in-memory runtime's tables."""
    try:
        runtime_table()
    except RuntimeUnavailable:
        return False
    return True
