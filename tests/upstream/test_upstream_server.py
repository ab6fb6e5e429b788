"""Inside upstream EvoScientist 0.3.8's own server, adopted with the one-line change: its
graphs, checkpointer, ``http.py`` and CORS as its own launcher starts them, its real main
agent around a scripted model; the route must answer what upstream's own ``GET
/threads/{id}/state`` implies.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import closing

import httpx
import pytest
from langgraph_sdk import get_client

from evoscientist_final_answer.recovery import stream_with_recovery
from evoscientist_final_answer.recovery.client import STREAM_MODE
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer, new_thread
from tests.upstream.env import require_upstream_env
from tests.upstream.implied import (
    ASSISTANT,
    ROUTE,
    ask,
    assert_as_implied,
    implied_answer,
    route_and_state,
)
from tests.upstream.server import ADOPTED, UpstreamServer, imported_from, upstream_server
from tests.upstream.site.scripted_model import answer_for, reasoning_for

pytestmark = pytest.mark.e2e

LOCAL_ORIGIN = "http://localhost:5173"  # where a WebUI page is served from
AGENT_NAMES_SQL = (
    "SELECT DISTINCT json_extract(CAST(metadata AS TEXT), '$.agent_name') FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ''"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpstreamServer]:
    """upstream's server from a clean unzip of the release's wheel with the kit's patch
    (upstream/evoscientist.patch), started by upstream's own launcher (so its CORS comes
    from ``boundary.py``): its ten graphs, its pruning checkpointer on its ``sessions.db``,
    its ``http.py`` with the boundary middleware and its ``/api/*`` routes."""
    env = require_upstream_env()
    root = tmp_path_factory.mktemp("upstream")
    with upstream_server(env, root, launcher=True, SCRIPTED_SLOW_DELAY="0.05") as started:
        yield started


@pytest.fixture
async def http(server: DevServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=70) as client:
        yield client


def stamped_agent_names(server: DevServer, thread_id: str) -> set[str | None]:
    """The ``agent_name`` stamps on a thread's root checkpoints in upstream's
    ``sessions.db``."""
    with closing(sqlite3.connect(f"file:{server.sessions_db}?mode=ro", uri=True)) as db:
        return {name for (name,) in db.execute(AGENT_NAMES_SQL, (thread_id,))}


async def run_turn(url: str, thread_id: str, question: str) -> str:
    """One turn through the langgraph API, to its end; its run id."""
    client = get_client(url=url, api_key=None)
    try:
        run = await client.runs.create(thread_id, ASSISTANT, input=ask(question))
        await client.runs.join(thread_id, run["run_id"])
        return run["run_id"]
    finally:
        await client.aclose()


async def test_upstream_is_served_from_the_adopted_unzip(
    server: DevServer, http: httpx.AsyncClient
) -> None:
    """The server's ``EvoScientist`` is the unzipped wheel's, whose ``http.py`` is the
    only one with the route: the installed copy stays as shipped."""
    tree = server.workdir.parent / "wheel"
    assert imported_from(server) == tree / "EvoScientist" / "__init__.py"
    installed = require_upstream_env().site_packages / ADOPTED[0]
    assert "final_answer_routes" not in installed.read_text()
    assert "final_answer_routes" in (tree / ADOPTED[0]).read_text()
    response = await http.get(ROUTE.format("00000000-0000-0000-0000-000000000000"))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "thread_not_found"


async def test_plain_answer_with_reasoning(server: DevServer, http: httpx.AsyncClient) -> None:
    question = "What is a control group?"
    thread_id = await new_thread(server.url)
    run_id = await run_turn(server.url, thread_id, question)
    answer, state, thread = await route_and_state(
        http, thread_id, run_id=run_id, include_reasoning="true"
    )
    assert_as_implied(answer, state, thread)
    assert answer["status"] == "success"
    assert answer["content"] == answer_for(question)
    assert answer["reasoning"] == reasoning_for(question)
    # Read from upstream's own store, found untold (no path or URI of ours was set).
    assert answer["source"] == "checkpointer"
    assert answer["run_id"] == run_id


async def test_tool_using_turn(server: DevServer, http: httpx.AsyncClient) -> None:
    question = "[tool] Plan the replication."
    thread_id = await new_thread(server.url)
    await run_turn(server.url, thread_id, question)
    answer, state, thread = await route_and_state(http, thread_id)
    assert_as_implied(answer, state, thread)
    kinds = [m["type"] for m in state["values"]["messages"]]
    assert kinds == ["human", "ai", "tool", "ai"], kinds  # upstream's write_todos ran
    tool_result = state["values"]["messages"][2]["content"]
    assert answer["content"] == answer_for(question, [tool_result])


async def test_two_turn_thread(server: DevServer, http: httpx.AsyncClient) -> None:
    thread_id = await new_thread(server.url)
    first_run = await run_turn(server.url, thread_id, "First: what is a p-value?")
    first, _, _ = await route_and_state(http, thread_id)
    second_run = await run_turn(server.url, thread_id, "Second: and a confidence interval?")
    answer, state, thread = await route_and_state(http, thread_id)
    assert_as_implied(answer, state, thread)
    assert answer["content"] == answer_for("Second: and a confidence interval?")
    assert answer["message_id"] != first["message_id"]
    assert answer["run_id"] == second_run
    # The rows read carry upstream's stamps (its pruning and its CLI select by them).
    assert stamped_agent_names(server, thread_id) == {"EvoScientist"}
    # The first run, asked for by id, is still answered with its own turn's answer.
    earlier = (await http.get(ROUTE.format(thread_id), params={"run_id": first_run})).json()
    assert earlier["content"] == first["content"] == answer_for("First: what is a p-value?")


@pytest.mark.parametrize("graph", ["writing-agent", "data-analysis-agent"])
async def test_threads_of_upstreams_other_graphs(
    server: DevServer, http: httpx.AsyncClient, graph: str
) -> None:
    """upstream's async sub-agents are graphs of their own, whose rows carry no
    ``agent_name`` stamp: their threads answer too."""
    question = f"Draft the {graph} summary."
    thread_id = await new_thread(server.url)
    client = get_client(url=server.url, api_key=None)
    try:
        run = await client.runs.create(thread_id, graph, input=ask(question))
        await client.runs.join(thread_id, run["run_id"])
    finally:
        await client.aclose()
    answer, state, thread = await route_and_state(http, thread_id)
    assert_as_implied(answer, state, thread)
    assert answer["content"] == answer_for(question)
    assert stamped_agent_names(server, thread_id) == {None}


async def test_hitl_interrupted_turn(server: DevServer, http: httpx.AsyncClient) -> None:
    thread_id = await new_thread(server.url)
    await run_turn(server.url, thread_id, "[hitl] Run the analysis script.")
    answer, state, thread = await route_and_state(http, thread_id)
    assert_as_implied(answer, state, thread)
    assert answer["status"] == "interrupted"
    assert answer["content"] == ""  # the turn has no answer text: a tool call awaits approval
    upstream_interrupts = [i for t in state["tasks"] for i in t["interrupts"]]
    assert [i["id"] for i in answer["interrupts"]] == [i["id"] for i in upstream_interrupts]
    assert answer["interrupts"][0]["value"]["action_requests"][0]["name"] == "execute"

    # Resumed with upstream's HITL decision format: the turn goes on to its answer.
    client = get_client(url=server.url, api_key=None)
    try:
        decisions = {"decisions": [{"type": "reject", "message": "Not now."}]}
        run = await client.runs.create(thread_id, ASSISTANT, command={"resume": decisions})
        await client.runs.join(thread_id, run["run_id"])
    finally:
        await client.aclose()
    resumed, state, thread = await route_and_state(http, thread_id, run_id=run["run_id"])
    assert_as_implied(resumed, state, thread)
    assert resumed["status"] == "success" and resumed["interrupts"] == []
    rejection = state["values"]["messages"][-2]["content"]
    assert "rejected" in rejection
    assert resumed["content"] == answer_for("[hitl] Run the analysis script.", [rejection])


async def answer_span(port: int, question: str) -> tuple[int, int]:
    """Where, in bytes the client receives, one healthy run stream carries the answer's
    first and last token (a stream shaped like the recovery client's own)."""
    thread_id = await new_thread(f"http://127.0.0.1:{port}")
    body = {
        "assistant_id": ASSISTANT,
        "input": ask(question),
        "stream_mode": STREAM_MODE,
        "stream_resumable": True,
    }
    received = b""
    async with FaultProxy(port, Fault()) as proxy:
        async with (
            httpx.AsyncClient(base_url=proxy.url, timeout=60) as http,
            http.stream("POST", f"/threads/{thread_id}/runs/stream", json=body) as response,
        ):
            async for chunk in response.aiter_bytes():
                received += chunk
        head = max(proxy.stats.downstream_bytes) - len(received)  # status line, headers
    first, last = answer_for(question).split()[0], answer_for(question).split()[-1]
    return head + received.index(first.encode()), head + received.rindex(last.encode())


async def test_stream_cut_mid_answer_by_a_proxy(server: DevServer) -> None:
    """The run's stream cut by a real proxy halfway through the answer's tokens: the
    recovery client still ends with the answer upstream's state holds, from the route."""
    first, last = await answer_span(server.port, "[slow] Cut A: what is power?")
    question = "[slow] Cut B: what is power?"  # as long as A: its stream is A's to the byte
    fault = Fault(kind="cut", after_bytes=(first + last) // 2)
    shown: list[str] = []
    async with FaultProxy(server.port, fault) as proxy:
        thread_id = await new_thread(server.url)
        result = await stream_with_recovery(
            proxy.url, thread_id, ASSISTANT, ask(question), on_update=shown.append, max_wait=60
        )
        assert proxy.stats.fired == 1, "the cut never happened"
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        state = (await http.get(f"/threads/{thread_id}/state")).json()
        thread = (await http.get(f"/threads/{thread_id}")).json()
    implied = implied_answer(state, thread)
    assert result["truncated"] is True
    assert result["source"] == "checkpointer"  # the route's answer, not the F2a fallback's
    assert result["content"] == implied.content == answer_for(question)
    assert result["message_id"] == implied.message_id
    assert result["status"] == implied.status == "success"
    assert shown[-1] == result["content"]


async def test_upstream_routes_keep_working(http: httpx.AsyncClient) -> None:
    models = await http.get("/api/models")
    assert models.status_code == 200
    assert len(models.json()["entries"]) > 100  # upstream's registry, not our demo's one model
    settings = await http.get("/api/settings")
    assert settings.status_code == 200
    assert isinstance(settings.json(), dict) and settings.json()
    teams = await http.get("/api/teams")
    assert teams.status_code == 200 and "teams" in teams.json()


async def test_the_hosts_boundary_and_cors_cover_the_route(
    server: DevServer, http: httpx.AsyncClient
) -> None:
    """upstream's BrowserBoundary refuses a foreign page on our route as on its own, and
    its CORS answers a local page, with ``location`` exposed: the CORS upstream's
    launcher builds from ``boundary.py``'s ``_EXPOSE_HEADERS`` (the kit adds it there,
    and to ``langgraph.json``, which upstream's tests keep equal)."""
    thread_id = await new_thread(server.url)
    foreign = {"Origin": "http://attacker.example"}
    for path in (ROUTE.format(thread_id), "/api/models"):
        refused = await http.get(path, headers=foreign)
        assert refused.status_code == 403, (path, refused.status_code)
    local = await http.get(ROUTE.format(thread_id), headers={"Origin": LOCAL_ORIGIN})
    assert local.status_code == 200
    assert local.headers["access-control-allow-origin"] == LOCAL_ORIGIN
    exposed = local.headers["access-control-expose-headers"].lower().split(",")
    assert "location" in [h.strip() for h in exposed]


async def test_unknown_thread_is_the_routes_own_404(http: httpx.AsyncClient) -> None:
    missing = await http.get(ROUTE.format("00000000-0000-4000-8000-000000000000"))
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "thread_not_found"


async def test_held_long_polls_answer_when_the_turn_ends(server: DevServer) -> None:
    """Long-polls held inside upstream's server (no lifespan or middleware of ours run
    there): ten parked on one running turn all answer its final answer when it ends."""
    thread_id = await new_thread(server.url)
    question = "[slow] Held: what is a null hypothesis?"
    client = get_client(url=server.url, api_key=None)
    try:
        run = await client.runs.create(thread_id, ASSISTANT, input=ask(question))
    finally:
        await client.aclose()
    params = {"run_id": run["run_id"], "wait": 60}
    async with httpx.AsyncClient(base_url=server.url, timeout=70) as http:
        polls = [http.get(ROUTE.format(thread_id), params=params) for _ in range(10)]
        answers = [r.json() for r in await asyncio.gather(*polls)]
    assert {a["content"] for a in answers} == {answer_for(question)}
    assert all(a["complete"] and a["status"] == "success" for a in answers)
