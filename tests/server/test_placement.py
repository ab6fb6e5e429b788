"""Where this process reads from, decided once (``server.placement``): the store, the API
reader and the server view of each place; and no other module asks."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from langgraph_runtime_inmem.database import GLOBAL_STORE

import evoscientist_final_answer
from evoscientist_final_answer.server.api import ServerApi
from evoscientist_final_answer.server.fallback import FallbackApi
from evoscientist_final_answer.server.placement import this_process
from evoscientist_final_answer.server.remote import RemoteServer
from evoscientist_final_answer.server.runtime import RuntimeTables
from evoscientist_final_answer.server.view import NoServer, ServerView
from evoscientist_final_answer.store.host import StoreAddress, host_store

URL = "http://127.0.0.1:1"


@pytest.fixture(autouse=True)
def unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("EVOSCIENTIST_LANGGRAPH_URL", "EVOSCIENTIST_READ_FROM", "EVOSCIENTIST_AGENT_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("EVOSCIENTIST_DATABASE_URI", raising=False)
    monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(tmp_path))
    monkeypatch.delitem(sys.modules, "langgraph_api.server", raising=False)


def inside_the_server(monkeypatch: pytest.MonkeyPatch, *, runtime: bool) -> None:
    monkeypatch.setitem(sys.modules, "langgraph_api.server", SimpleNamespace())
    if runtime:
        monkeypatch.setenv("LANGGRAPH_RUNTIME_EDITION", "inmem")
        monkeypatch.setitem(GLOBAL_STORE, "threads", [])
    else:
        monkeypatch.setenv("LANGGRAPH_RUNTIME_EDITION", "postgres")


async def test_standalone(tmp_path: Path) -> None:
    """The environment's store alone: nothing known beside the checkpoint."""
    placement = this_process()
    assert placement.api is None
    assert type(placement.server) is NoServer
    assert await placement.store() == StoreAddress(sqlite_path=tmp_path / "sessions.db")
    assert placement.agent == "EvoScientist"


async def test_standalone_with_a_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The environment's store, the configured server's API behind it, read as this
    process; its answers carry that server's status of the thread."""
    monkeypatch.setenv("EVOSCIENTIST_LANGGRAPH_URL", URL)
    placement = this_process()
    assert placement.api is not None and placement.api.url == URL
    assert not placement.api.as_caller and placement.api.status_in_answer
    assert type(placement.server) is FallbackApi and placement.server.api is placement.api
    assert await placement.store() == StoreAddress(sqlite_path=tmp_path / "sessions.db")


async def test_a_sidecar(monkeypatch: pytest.MonkeyPatch) -> None:
    """``EVOSCIENTIST_READ_FROM=api``: no store, and the server's API read as each
    caller, its answers the state's alone, its runs weighed as the server's own."""
    monkeypatch.setenv("EVOSCIENTIST_READ_FROM", "api")
    monkeypatch.setenv("EVOSCIENTIST_LANGGRAPH_URL", URL)
    placement = this_process()
    assert await placement.store() is None
    api = placement.api
    assert api is not None and api.url == URL
    assert api.as_caller and not api.status_in_answer
    view = placement.server
    assert type(view) is RemoteServer and view.api is api
    assert view.runs_here and view.asks_as_caller and view.status_watch() is None
    # Inside a server the setting is ignored: the route reads the server's own store.
    inside_the_server(monkeypatch, runtime=True)
    monkeypatch.delenv("EVOSCIENTIST_LANGGRAPH_URL")
    assert type(this_process().server) is RuntimeTables


@pytest.mark.parametrize(
    ("url", "runtime", "view"),
    [
        (None, True, RuntimeTables),  # langgraph dev: its own tables
        (None, False, ServerApi),  # another runtime: its API, in process
        (URL, True, ServerApi),  # a URL configured: that server's API
    ],
)
def test_inside_the_server(
    monkeypatch: pytest.MonkeyPatch, url: str | None, runtime: bool, view: type[ServerView]
) -> None:
    """The store the server was configured with, every graph's rows, and the server
    itself, asked as the caller."""
    inside_the_server(monkeypatch, runtime=runtime)
    if url is not None:
        monkeypatch.setenv("EVOSCIENTIST_LANGGRAPH_URL", url)
    placement = this_process()
    assert placement.store is host_store
    assert placement.agent is None
    assert placement.api is not None and placement.api.url == url
    assert not placement.api.as_caller and placement.api.status_in_answer
    assert type(placement.server) is view
    assert placement.server.runs_here and placement.server.asks_as_caller


def test_only_the_placement_asks_where_this_process_runs() -> None:
    """The sidecar setting and the runtime's tables are asked about in one module (and
    defined in theirs): a new place is one module and one line there."""
    package = Path(evoscientist_final_answer.__file__).parent
    asking = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        for word in ("read_from(", "READ_FROM_API", "runtime_readable(")
        if word in path.read_text()
    }
    assert asking == {"settings.py", "store/host_process.py", "server/placement.py"}
