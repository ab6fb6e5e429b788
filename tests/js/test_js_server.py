"""LangGraph's JavaScript server (``langgraphjs dev``: tests/support/js_server.py) with the
final-answer route mounted as a user mounts it (tests/jsserver/src/app.ts), beside the
Python ``langgraph dev``, both serving the contract graph (tests/jsserver/src/contract.ts
and tests/support/contract_graph.py): the same cases give the same results on both.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import Command
from playwright.async_api import Browser

from tests.support import js_server, jstools, route_contract
from tests.support.browser_turns import healthy_bytes, run_page
from tests.support.contract_graph import FAILURE, GRAPH_ID, QUESTION, SLOW, SPEC, answer_for
from tests.support.local_http import local_client
from tests.support.proxy import Fault, FaultProxy, measure_stream_bytes
from tests.support.servers import DevServer, langgraph_dev
from tests.support.sidecar import Sidecar, sidecar

pytestmark = pytest.mark.e2e

SERVERS = ("js", "python")
Q = "What is a control group?"


def _human(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "human", "content": text}]}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, DevServer]]:
    """One JavaScript and one Python server, started side by side."""
    js_server.installed()
    root = tmp_path_factory.mktemp("js-server")
    managers: dict[str, AbstractContextManager[DevServer]] = {
        "js": js_server.js_server(root / "js"),
        "python": langgraph_dev(
            root / "python" / "work", root / "python" / "data", extra_graphs={GRAPH_ID: SPEC}
        ),
    }
    with ExitStack() as stack, ThreadPoolExecutor(len(managers)) as pool:
        futures = {name: pool.submit(manager.__enter__) for name, manager in managers.items()}
        started: dict[str, DevServer] = {}
        failure: BaseException | None = None
        for name, future in futures.items():
            try:
                started[name] = future.result()
                stack.push(managers[name].__exit__)
            except BaseException as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
        yield started


@pytest.fixture(scope="module")
def js_sidecar(
    servers: dict[str, DevServer], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Sidecar]:
    """The Python complete app as a sidecar of the JS server: its API alone."""
    with sidecar(servers["js"].url, tmp_path_factory.mktemp("sidecar")) as app:
        yield app


@pytest.fixture(params=SERVERS)
async def client(
    request: pytest.FixtureRequest, servers: dict[str, DevServer]
) -> AsyncIterator[LangGraphClient]:
    client = get_client(url=servers[request.param].url, api_key=None)
    try:
        yield client
    finally:
        await client.aclose()


async def _last_message(client: LangGraphClient, thread_id: str) -> dict[str, Any]:
    state = await client.threads.get_state(thread_id)
    return state["values"]["messages"][-1]


async def test_answer(client: LangGraphClient) -> None:
    thread_id = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread_id, GRAPH_ID, input=_human(Q))
    last = await _last_message(client, thread_id)
    assert last["type"] == "ai"
    assert last["content"] == answer_for(Q)
    assert last["id"]  # the framework's
    [run] = await client.runs.list(thread_id)
    assert run["status"] == "success"


async def test_answer_streams_token_by_token(client: LangGraphClient) -> None:
    """``messages-tuple``: the answer arrives in many chunks of one message, which join
    to the answer the state holds."""
    thread_id = (await client.threads.create())["thread_id"]
    chunks: list[dict[str, Any]] = []
    async for part in client.runs.stream(
        thread_id, GRAPH_ID, input=_human(Q), stream_mode="messages-tuple"
    ):
        if part.event == "messages":
            message, metadata = part.data
            assert metadata["langgraph_node"] == "agent"
            chunks.append(message)
    assert len(chunks) > 10
    assert "".join(chunk["content"] for chunk in chunks) == answer_for(Q)
    last = await _last_message(client, thread_id)
    assert {chunk["id"] for chunk in chunks} == {last["id"]}


async def test_failure(client: LangGraphClient) -> None:
    thread_id = (await client.threads.create())["thread_id"]
    result = await client.runs.wait(
        thread_id, GRAPH_ID, input=_human(f"{Q} [fail]"), raise_error=False
    )
    assert isinstance(result, dict)
    assert FAILURE in str(result["__error__"])
    [run] = await client.runs.list(thread_id)
    assert run["status"] == "error"
    assert (await client.threads.get(thread_id))["status"] == "error"
    # The node failed: its streamed tokens never reached the state.
    assert (await _last_message(client, thread_id))["type"] == "human"


async def test_interrupt_then_resume(client: LangGraphClient) -> None:
    thread_id = (await client.threads.create())["thread_id"]
    question = f"{Q} [interrupt]"
    await client.runs.wait(thread_id, GRAPH_ID, input=_human(question))
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "interrupted"
    state = await client.threads.get_state(thread_id)
    assert state["next"] == ["agent"]
    [task] = state["tasks"]
    assert [interrupt["value"] for interrupt in task["interrupts"]] == [QUESTION]
    assert (await _last_message(client, thread_id))["type"] == "human"

    await client.runs.wait(thread_id, GRAPH_ID, command=Command(resume="yes"))
    assert (await client.threads.get(thread_id))["status"] == "idle"
    assert (await _last_message(client, thread_id))["content"] == answer_for(question)
    runs = await client.runs.list(thread_id)
    assert [run["status"] for run in runs] == ["success", "success"]


def test_ok(servers: dict[str, DevServer]) -> None:
    response = httpx.get(f"{servers['js'].url}/ok")
    assert response.status_code == 200
    assert response.json() == {"ok": True}


def test_final_answer_route_is_ours(servers: dict[str, DevServer]) -> None:
    """``GET /api/threads/{id}/final-answer`` reaches the Hono app of src/app.ts (the
    server's own 404 for a path it does not serve is plain text)."""
    url = servers["js"].url
    missing = httpx.get(f"{url}/api/threads/{uuid.uuid4()}/not-a-route")
    assert (missing.status_code, missing.headers["content-type"].split(";")[0]) == (
        404,
        "text/plain",
    )
    response = httpx.get(f"{url}/api/threads/{uuid.uuid4()}/final-answer")
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body["error"]) >= {"code", "message", "retryable"}
    assert (response.status_code, body["error"]["code"]) == (404, "thread_not_found")


def test_each_server_has_its_own_scratch_dir(servers: dict[str, DevServer]) -> None:
    """The JS server's ``.langgraph_api`` is in its own temporary project, not in the
    repository's tests/jsserver."""
    js = servers["js"]
    assert js.data_dir.is_dir()
    assert js.data_dir.parent == js.workdir
    assert isinstance(js, js_server.JsServer)
    assert js.startup_s < js_server.STARTUP_TIMEOUT
    print(f"langgraphjs dev: spawn to /info in {js.startup_s:.2f} s")


def test_project_is_a_users() -> None:
    """src/app.ts is the one line a user adds, and its import."""
    app = (js_server.PROJECT / "src" / "app.ts").read_text().split("\n")
    code = [line for line in app if line.strip()]
    assert code == [
        'import { finalAnswerApp } from "@evoscientist/final-answer/hono";',
        "export const app = finalAnswerApp();",
    ]


async def test_the_js_route_answers_from_its_cache_never_stale(
    servers: dict[str, DevServer],
) -> None:
    """The route serves an unchanged thread from its cache (src/route/cached-reader.js):
    the same answer and ETag again, a 304 for it; a change the server makes without
    bumping the thread's ``updated_at`` is read all the same: a state update that changes
    no value (a new checkpoint), and a run deleted with its checkpoints."""
    url = servers["js"].url
    api = get_client(url=url, api_key=None)
    try:
        thread_id = (await api.threads.create())["thread_id"]
        await api.runs.wait(thread_id, GRAPH_ID, input=_human(Q))
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:

            async def read() -> httpx.Response:
                response = await http.get(f"/api/threads/{thread_id}/final-answer")
                assert response.status_code == 200, response.text
                return response

            first = await read()
            again = await read()
            assert (again.json(), again.headers["etag"]) == (first.json(), first.headers["etag"])
            not_modified = await http.get(
                f"/api/threads/{thread_id}/final-answer",
                headers={"If-None-Match": first.headers["etag"]},
            )
            assert not_modified.status_code == 304
            before = (await api.threads.get(thread_id))["updated_at"]
            await api.threads.update_state(thread_id, {"messages": []}, as_node="agent")
            assert (await api.threads.get(thread_id))["updated_at"] == before
            updated = (await read()).json()
            state = await api.threads.get_state(thread_id)
            assert updated["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
            assert updated["checkpoint_id"] != first.json()["checkpoint_id"]
            run = await api.runs.create(thread_id, GRAPH_ID, input=_human("And a second?"))
            await api.runs.join(thread_id, run["run_id"])
            assert (await read()).json()["run_id"] == run["run_id"]
            await api.runs.delete(thread_id, run["run_id"])
            assert (await read()).json() == updated
    finally:
        await api.aclose()


# ---- the route's contract on both servers, and the sidecar (tests/support/route_contract.py)

# Where each route is asked, and which server runs the threads it is asked about.
ROUTES = {"js": "js", "python": "python", "sidecar": "js"}


@pytest.mark.parametrize("name", list(route_contract.CASES))
async def test_the_route_keeps_its_contract_on_both_servers(
    name: str, servers: dict[str, DevServer], js_sidecar: Sidecar
) -> None:
    """Each case passes on each server's route and on the sidecar of the JS server
    (the Python complete app reading that server's API), and all three answer alike."""
    routes: dict[str, route_contract.Route] = {}
    async with contextlib.AsyncExitStack() as stack:
        for route_name, server_name in ROUTES.items():
            api = get_client(url=servers[server_name].url, api_key=None)
            stack.push_async_callback(api.aclose)
            url = js_sidecar.url if route_name == "sidecar" else servers[server_name].url
            http = await stack.enter_async_context(local_client(url, timeout=60))
            routes[route_name] = route_contract.Route(route_name, api, http)
        seen = dict(
            zip(
                routes,
                await asyncio.gather(
                    *(route_contract.CASES[name](route) for route in routes.values())
                ),
                strict=True,
            )
        )
    for route_name, one in seen.items():
        assert one == seen["js"], f"js: {seen['js']}\n{route_name}: {one}"


# ---- the package's own client recovers cut streams on the JS server


async def test_stream_with_recovery_recovers_cuts_on_the_js_server(
    servers: dict[str, DevServer],
) -> None:
    """``streamWithRecovery`` (clients/js/test/live/js-server.test.mjs) through a cut
    mid-answer whose every rejoin is cut too, and a cut before the response: the route's
    exact answer, one run per submit, the run's end seen at once."""
    server = servers["js"]
    thread_id = (await get_client(url=server.url, api_key=None).threads.create())["thread_id"]
    total = await measure_stream_bytes(server.port, thread_id, GRAPH_ID, f"{Q} {SLOW}")
    faults = {
        "cut mid-answer, every rejoin cut": Fault(
            "cut", int(0.6 * total), times=None, then_after_bytes=0
        ),
        "cut before the response": Fault("cut", 0),
    }
    proxies = {name: await FaultProxy(server.port, fault).start() for name, fault in faults.items()}
    try:
        code, output = await jstools.run_node_test(
            jstools.PACKAGE / "test" / "live" / "js-server.test.mjs",
            {
                "EVOSCI_JS_SERVER_URL": server.url,
                "EVOSCI_JS_PROXIES": json.dumps({n: p.url for n, p in proxies.items()}),
            },
            120,
        )
    finally:
        for proxy in proxies.values():
            await proxy.stop()
    report = {name: vars(proxy.stats) for name, proxy in proxies.items()}
    context = f"baseline {total} B; proxies {json.dumps(report)}\n--- node --test ---\n{output}"
    jstools.check_node_test(code, output, proxies, context)


# ---- the browser pages (useStream of the SDK, assistant-ui) on the JS server


BROWSER_PAGES = {"useStream": "index.html", "assistant-ui": "assistant-ui.html"}
# A healthy run's longest response per page, measured once (the faults are placed in it).
_healthy_bytes: dict[str, int] = {}
BROWSER_FAULTS: dict[str, Callable[[int], Fault]] = {
    "cut mid-answer": lambda total: Fault("cut", int(0.7 * total), times=None),
    "cut before the response": lambda total: Fault("cut", 0, match=("/runs/stream",)),
}


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("fault", list(BROWSER_FAULTS))
@pytest.mark.parametrize("front_end", list(BROWSER_PAGES))
async def test_a_page_on_the_js_server_ends_on_the_route_answer(
    front_end: str, fault: str, browser: Browser, site: str, servers: dict[str, DevServer]
) -> None:
    """The adopted page (one changed import) streaming the JS server's contract graph,
    cut: the route's exact answer, one run per submit."""
    server = servers["js"]

    def url_of(api: str) -> str:
        return f"{site}/{BROWSER_PAGES[front_end]}?api={api}&hook=recovery&assistant={GRAPH_ID}"

    if front_end not in _healthy_bytes:
        _healthy_bytes[front_end] = await healthy_bytes(browser, server, url_of)
    total = _healthy_bytes[front_end]
    outcome = await run_page(browser, server, url_of, BROWSER_FAULTS[fault](total), 1)
    (turn,) = outcome.turns
    context = f"{front_end}, {fault}: {turn!r}; proxy {vars(outcome.proxy.stats)}"
    print(context)
    assert outcome.proxy.stats.fired >= 1, f"the fault never fired; {context}"
    assert turn.exact and turn.runs == 1, context
