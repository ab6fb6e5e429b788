"""Property test of store maintenance (hypothesis): random interleavings of runs and
maintenance calls on the factory's saver, both stores, plain and ``DeltaChannel``
messages; after every call no surviving checkpoint decodes differently.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from tests.maintenance.oracle import (
    Decoded,
    assert_decodes_unchanged,
    decode,
    run_ids,
    stored,
)
from tests.support.factory_saver import factory_saver
from tests.support.seeds import MessagesMode, Store, new_run_id, node_graph, uuid_thread_id

pytestmark = pytest.mark.backends("sqlite", "postgres")

EXAMPLES = 12
OPS = st.lists(
    st.one_of(
        st.just(("run",)),
        st.just(("pause",)),
        st.just(("resume",)),
        st.just(("keep_latest",)),
        st.just(("delete_thread",)),
        st.just(("copy",)),
        st.tuples(st.just("rollback"), st.integers(0, 20), st.integers(1, 2)),
    ),
    min_size=4,
    max_size=12,
)


def reply(name: str) -> Any:
    def node(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{name} after {len(state['messages'])} messages")]}

    return node


@dataclass
class Trial:
    """One thread under random runs and maintenance, and what langgraph decoded."""

    saver: BaseCheckpointSaver
    mode: MessagesMode
    thread_id: str = field(default_factory=uuid_thread_id)
    runs: list[str] = field(default_factory=list)
    decoded: dict[str, Decoded] = field(default_factory=dict)
    copies: list[str] = field(default_factory=list)

    def graph(self, *, pause: bool = False) -> CompiledStateGraph:
        nodes = [("draft", reply("draft")), ("review", reply("review"))]
        interrupt = ["review"] if pause else None
        return node_graph(self.saver, nodes, mode=self.mode, interrupt_before=interrupt)

    async def run(self, graph_input: Any, *, pause: bool = False) -> None:
        run_id = new_run_id()
        config = {"configurable": {"thread_id": self.thread_id}, "metadata": {"run_id": run_id}}
        await self.graph(pause=pause).ainvoke(graph_input, config)
        self.runs.append(run_id)
        for checkpoint_id in await stored(self.saver, self.thread_id):
            if checkpoint_id not in self.decoded:
                self.decoded[checkpoint_id] = await decode(
                    self.graph(), self.thread_id, checkpoint_id
                )

    async def head_pending(self) -> bool:
        return bool((await self.graph().aget_state(_config(self.thread_id))).next)

    async def check(self, thread_id: str | None = None) -> dict[str, str | None]:
        thread_id = thread_id or self.thread_id
        return await assert_decodes_unchanged(self.graph(), self.saver, thread_id, self.decoded)

    async def step(self, op: tuple[Any, ...]) -> None:
        before = await stored(self.saver, self.thread_id)
        owners = await run_ids(self.saver, self.thread_id)
        kind = op[0]
        if kind == "run" or (kind == "resume" and not await self.head_pending()):
            await self.run({"messages": [HumanMessage(f"question {len(self.runs)}")]})
        elif kind == "pause":
            await self.run({"messages": [HumanMessage("in flight")]}, pause=True)
        elif kind == "resume":
            await self.run(None)
        elif kind == "keep_latest":
            await self.saver.aprune([self.thread_id], strategy="keep_latest")
            await self._check_keep_latest(before, owners)
        elif kind == "delete_thread":
            await self.saver.aprune([self.thread_id], strategy="delete")
            assert await stored(self.saver, self.thread_id) == {}
        elif kind == "copy":
            target = uuid_thread_id()
            await self.saver.acopy_thread(self.thread_id, target)
            self.copies.append(target)
            assert await self.check(target) == before
        else:
            _, start, count = op
            doomed = self.runs[start % len(self.runs) :][:count] if self.runs else []
            await self.saver.adelete_for_runs(doomed)
            left = await self.check()
            assert set(left) == {c for c in before if owners[c] not in doomed}
        await self.check()
        for target in self.copies:
            await self.check(target)

    async def _check_keep_latest(
        self, before: dict[str, str | None], owners: dict[str, str | None]
    ) -> None:
        left = await self.check()
        if not before:
            return
        head = max(before)
        assert head in left
        if self.decoded[head][1] and owners[head] is not None:
            cursor = before[head]
            while cursor is not None and owners.get(cursor) == owners[head]:
                cursor = before.get(cursor)
            assert cursor is None or cursor not in before or cursor in left


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


@pytest.fixture
async def saver(store: Store, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    async with factory_saver(store, monkeypatch) as saver:
        yield saver


@pytest.mark.parametrize("mode", ["add_messages", "delta"])
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS)
# The two the issue names: a prune while a run is in flight, then its rollback; and
# the deletion of a run in the middle, then more runs and a copy.
@example(ops=[("run",), ("pause",), ("keep_latest",), ("rollback", 2, 1), ("run",)])
@example(ops=[("run",), ("run",), ("rollback", 1, 1), ("copy",), ("run",), ("rollback", 0, 2)])
async def test_no_maintenance_changes_a_surviving_checkpoint(
    saver: BaseCheckpointSaver, mode: MessagesMode, ops: list[tuple[Any, ...]]
) -> None:
    """Runs finished, stopped with ``next`` pending (as a run in flight is) or resumed, and
    ``aprune`` (both strategies), ``adelete_for_runs`` (of any runs: the oldest, the
    middle, the newest) and ``acopy_thread``. After every call:

    - every surviving checkpoint decodes (``graph.aget_state`` at its id) exactly as
      langgraph decoded it when it was written, and names a stored parent or none;
    - ``adelete_for_runs`` removed exactly the runs' checkpoints; ``keep_latest`` kept the
      head and, while the head's run is unfinished, the previous run's newest checkpoint;
      a copy holds the source's checkpoints."""
    trial = Trial(saver, mode)
    await trial.run({"messages": [HumanMessage("first question")]})
    for op in ops:
        await trial.step(op)
