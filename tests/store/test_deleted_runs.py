"""``store.deleted_runs``: the runs a saver deleted are remembered, and only those."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import HumanMessage

from evoscientist_final_answer.maintenance.sqlite import MaintainedSqliteSaver
from evoscientist_final_answer.store.deleted_runs import deleted_here, recording_deletions
from tests.support.seeds import answer, new_run_id, node_graph, uuid_thread_id


async def test_a_deleted_run_is_remembered(tmp_path: Path) -> None:
    async with MaintainedSqliteSaver.from_conn_string(str(tmp_path / "sessions.db")) as saver:
        saver = recording_deletions(saver)
        assert type(saver) is MaintainedSqliteSaver  # the class the server logs
        graph = node_graph(saver, [("agent", answer("hi"))])
        thread_id, kept, deleted = uuid_thread_id(), new_run_id(), new_run_id()
        for run_id in (kept, deleted):
            config = {"configurable": {"thread_id": thread_id}, "metadata": {"run_id": run_id}}
            await graph.ainvoke({"messages": [HumanMessage("q")]}, config)
        await saver.adelete_for_runs([deleted])
        assert deleted_here(deleted)
        assert not deleted_here(kept)
        remaining = [c async for c in saver.alist({"configurable": {"thread_id": thread_id}})]
        assert remaining and all(c.metadata["run_id"] == kept for c in remaining)
