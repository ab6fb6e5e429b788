"""The served graph's factory (``EvoScientist/agent.py``): one compiled graph per model
serves every run (the server runs a copy of it with its own checkpointer)."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from EvoScientist.agent import make_graph


def test_one_compiled_graph_per_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOSCIENTIST_MODEL", "offline")
    graph = make_graph({"configurable": {"thread_id": "a"}})
    assert make_graph({"configurable": {"thread_id": "b"}}) is graph
    assert make_graph() is graph
    # What the server does with it (langgraph_api.graph.get_graph): a copy of its own.
    served = graph.copy(update={"checkpointer": InMemorySaver()})
    assert served is not graph and graph.checkpointer is None


def test_another_model_gets_its_own_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOSCIENTIST_MODEL", "offline")
    offline = make_graph()
    monkeypatch.setenv("EVOSCIENTIST_MODEL", "offline:second")
    assert make_graph() is not offline
