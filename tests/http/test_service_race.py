"""The server's record of a run is read after the run's checkpoint. A run that finishes
between the two reads must not look like one that stopped with work left: the route
reads the checkpoint again and answers the finished run, never ``run_stopped`` over the
partial answer (a race seen with a thousand waiters woken by the final commit).
"""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.server.api import ServerApi
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from tests.support.seeds import Seeder, Store, answer, new_run_id, node_graph
from tests.support.servers import listening


@pytest.mark.backends("sqlite", "postgres")
async def test_a_run_that_finishes_between_checkpoint_and_run_record_reads_as_finished(
    store: Store, seeder: Seeder
) -> None:
    graph = node_graph(
        seeder.saver,
        [("draft", answer("draft")), ("final", answer("the final answer"))],
        interrupt_before=["final"],
    )
    thread = seeder.thread(graph)
    run_id = new_run_id()
    config = seeder.run_config(thread.thread_id, run_id)
    config["metadata"]["graph_id"] = "EvoScientist"  # a langgraph-api run
    await graph.ainvoke({"messages": [HumanMessage("question")]}, config)
    assert (await graph.aget_state(thread.config)).next == ("final",)
    run_lists = 0

    async def search(request: Request) -> JSONResponse:
        return JSONResponse([{"thread_id": thread.thread_id, "status": "busy"}])

    async def runs(request: Request) -> JSONResponse:
        nonlocal run_lists
        run_lists += 1
        if run_lists == 1:  # the run ends just after the route read its checkpoint
            await graph.ainvoke(None, config)
        return JSONResponse([{"run_id": run_id, "status": "success"}])

    api = Starlette(
        routes=[
            Route("/threads/search", search, methods=["POST"]),
            Route("/threads/{thread_id}/runs", runs),
        ]
    )
    async with listening(api) as port:
        reader = ApiAnswerReader(f"http://127.0.0.1:{port}")
        # The route inside the server, asking it through its API.
        service = FinalAnswerService(store.reader(), reader, server=ServerApi(reader))
        try:
            got = await service.read(thread.thread_id)
        finally:
            await service.close()
    assert run_lists == 1, "the run record was read once, after the first checkpoint read"
    assert (got.status.value, got.complete, got.error) == ("success", True, None)
    assert got.content == "the final answer"
