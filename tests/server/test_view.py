"""The server view: picked once, from where the route runs (``server.choice``); and
its facts fetched for a read only when the verdict needs them, and once
(``server.view.ThreadFacts``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import SimpleNamespace

import pytest
from langgraph_runtime_inmem.database import GLOBAL_STORE

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.run_liveness import Rules
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.server.api import ServerApi
from evoscientist_final_answer.server.choice import api_for_this_process, server_view
from evoscientist_final_answer.server.fallback import FallbackApi
from evoscientist_final_answer.server.remote import RemoteServer
from evoscientist_final_answer.server.runtime import RuntimeTables
from evoscientist_final_answer.server.view import NoServer, ServerView

RULES = Rules(shared_store=False, silence_bound=60.0)


def inside_the_server(monkeypatch: pytest.MonkeyPatch, *, runtime: bool) -> None:
    monkeypatch.setitem(sys.modules, "langgraph_api.server", SimpleNamespace())
    if runtime:
        monkeypatch.setenv("LANGGRAPH_RUNTIME_EDITION", "inmem")
        monkeypatch.setitem(GLOBAL_STORE, "threads", [])
    else:
        monkeypatch.setenv("LANGGRAPH_RUNTIME_EDITION", "postgres")


def test_standalone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "langgraph_api.server", raising=False)
    assert api_for_this_process(None) is None
    assert type(server_view(None)) is NoServer
    api = api_for_this_process("http://127.0.0.1:1")
    assert api is not None and api.url == "http://127.0.0.1:1"
    assert type(server_view(api)) is FallbackApi
    assert not api.sidecar


async def test_standalone_as_a_sidecar(monkeypatch: pytest.MonkeyPatch) -> None:
    """``EVOSCIENTIST_READ_FROM=api``: no store, and the server's API read as each
    caller, its runs weighed as the server's own."""
    from evoscientist_final_answer.store.host import this_process_store

    monkeypatch.delitem(sys.modules, "langgraph_api.server", raising=False)
    monkeypatch.setenv("EVOSCIENTIST_READ_FROM", "api")
    monkeypatch.setenv("EVOSCIENTIST_LANGGRAPH_URL", "http://127.0.0.1:1")
    assert await this_process_store() is None
    api = api_for_this_process("http://127.0.0.1:1")
    assert api is not None and api.sidecar
    view = server_view(api)
    assert type(view) is RemoteServer
    assert view.runs_here and view.asks_as_caller and view.status_watch() is None
    # Inside a server the setting is ignored: the route reads the server's own store.
    inside_the_server(monkeypatch, runtime=True)
    assert type(server_view(api_for_this_process(None))) is RuntimeTables


@pytest.mark.parametrize(
    ("url", "runtime", "view"),
    [
        (None, True, RuntimeTables),  # langgraph dev: its own tables
        (None, False, ServerApi),  # another runtime: its API, in process
        ("http://127.0.0.1:1", True, ServerApi),  # a URL configured: that server's API
    ],
)
def test_inside_the_server(
    monkeypatch: pytest.MonkeyPatch, url: str | None, runtime: bool, view: type[ServerView]
) -> None:
    inside_the_server(monkeypatch, runtime=runtime)
    api = api_for_this_process(url)
    assert api is not None and api.url == url
    assert type(server_view(api)) is view
    assert server_view(api).runs_here and server_view(api).asks_as_caller


class Counted(ServerView):
    """A view answering fixed facts, counting the questions."""

    def __init__(self, *, runs_here: bool, status: str | None = None) -> None:
        self.runs_here = runs_here
        self.status = status
        self.asked: list[str] = []

    async def thread_status(self, thread_id: str) -> str | None:
        self.asked.append("status")
        return self.status

    async def runs(self, thread_id: str, writer_run_id: str | None) -> Mapping[str, str] | None:
        self.asked.append("runs")
        return {}

    async def busy_elsewhere(self, thread_id: str) -> bool:
        self.asked.append("busy")
        return False


def answer(status: RunStatus) -> FinalAnswer:
    return FinalAnswer(
        "thread-1",
        status,
        run_id="run-1",
        graph_id="EvoScientist",
        updated_at="2000-01-01T00:00:00+00:00",  # silent for ever
    )


async def test_a_finished_checkpoint_on_an_idle_thread_asks_nothing_more() -> None:
    view = Counted(runs_here=True, status="idle")
    facts = view.facts("thread-1")
    await facts.status()
    assert (await facts.judge(answer(RunStatus.SUCCESS), None, RULES)).status is RunStatus.SUCCESS
    assert view.asked == ["status"]


async def test_each_fact_is_fetched_once_per_read() -> None:
    """The re-read after a race judges the new checkpoint by the same facts."""
    view = Counted(runs_here=True, status="busy")
    facts = view.facts("thread-1")
    for _ in range(2):
        await facts.status()
        await facts.judge(answer(RunStatus.RUNNING), None, RULES)
    assert view.asked == ["status", "runs"]
    # The next read asks again.
    await view.facts("thread-1").judge(answer(RunStatus.RUNNING), None, RULES)
    assert view.asked == ["status", "runs", "runs"]


async def test_a_fallback_is_asked_only_for_a_run_silent_past_the_bound() -> None:
    view = Counted(runs_here=False)
    facts = view.facts("thread-1")
    await facts.judge(answer(RunStatus.SUCCESS), None, RULES)
    assert view.asked == []
    lost = await facts.judge(answer(RunStatus.RUNNING), None, RULES)
    await facts.judge(answer(RunStatus.RUNNING), None, RULES)
    assert lost.error is not None and lost.error["code"] == "run_lost"
    assert view.asked == ["busy"]
