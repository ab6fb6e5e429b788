"""CopilotKit: a real ``CopilotRuntime`` serving @ag-ui/langgraph's ``LangGraphAgent``,
bare and then as ``@evoscientist/final-answer/ag-ui``'s drop-in, against a real
``langgraph dev``, with a fault proxy between the runtime and the server, and a real
AG-UI client (``@ag-ui/client``'s ``HttpAgent``) reading the runtime
(tests/js/copilotkit/copilotkit.test.mjs).

Each cut breaks the run's stream (``POST /threads/{id}/runs/stream``, or its rejoin)
between the runtime and the server: mid-answer once per turn, mid-answer and then every
rejoin, and before the POST's response. Adopted, every turn ends finished on the route's
exact text with one run per request (node asserts it); bare is measured and reported
(docs/front-ends/copilotkit.md). Then the same without a cut (the drop-in sends what
LangGraphAgent sends; a failed run ends on the route's error), and a CopilotKit page
(@copilotkit/react-core) in Debian's chromium through a cut mid-answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import jstools
from tests.support.browser_page import headless_chromium
from tests.support.proxy import Fault, FaultProxy, measure_stream_bytes
from tests.support.servers import DevServer, langgraph_dev, new_thread

pytestmark = pytest.mark.e2e

PROOF = jstools.REPO / "tests" / "js" / "copilotkit"
ASSISTANT = "EvoScientist"
SERVER_ENV = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"}
NODE_TIMEOUT = 300.0
# LangGraphAgent's own stream request: its default stream modes, with subgraphs.
AGENT_STREAM = {
    "stream_mode": ["events", "values", "updates", "messages-tuple"],
    "stream_subgraphs": True,
}
BASELINE_QUESTION = "What is a control group?"  # the first question the node test asks
MID = 0.7  # of a healthy stream's bytes: inside the answer's tokens (they run ~33-95 %)
RUN_STREAMS = ("/runs/stream", "/stream")
# passthrough.test.mjs's graphs, beside the project's agent (graph id → repo-relative spec).
PASSTHROUGH_GRAPHS = {
    "interrupt": "tests/support/interrupt_graph.py:graph",
    "failing": "tests/support/failing_graph.py:graph",
}


# The agent classes each cut is put to (tests/js/copilotkit/runtime.mjs's AGENTS): bare and
# adopted everywhere; @copilotkit/runtime/langgraph's subclass, adopted, on one cut.
EVERY_CUT = ("bare", "adopted")
ONE_CUT = "adopted-copilotkit"


def cuts(total: int) -> dict[str, tuple[Fault, int]]:
    """The cuts (name → fault, turns asked in one thread); the first is also ONE_CUT's."""
    mid = int(MID * total)
    return {
        "cut mid-answer, once per turn": (Fault("cut", mid, times=2, match=("/runs/stream",)), 2),
        "cut mid-answer, then every rejoin": (
            Fault("cut", mid, times=None, then_after_bytes=0, match=RUN_STREAMS),
            1,
        ),
        "cut before the POST's response": (Fault("cut", 0, match=("/runs/stream",)), 1),
    }


def proof_node() -> str:
    """node, with the proof's own packages installed (``make test`` runs ``npm ci`` there)."""
    path = jstools.node()
    if not (PROOF / "node_modules" / ".package-lock.json").exists():
        jstools.missing(f"{PROOF / 'node_modules'} is not installed: run `npm ci` in {PROOF}")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    proof_node()
    root = tmp_path_factory.mktemp("copilotkit")
    with langgraph_dev(
        root / "work", root / "data", env=SERVER_ENV, extra_graphs=PASSTHROUGH_GRAPHS
    ) as started:
        yield started


async def _agent_stream_bytes(server: DevServer) -> int:
    """Bytes of one healthy run stream with LangGraphAgent's stream modes."""
    thread_id = await new_thread(server.url)
    return await measure_stream_bytes(
        server.port, thread_id, ASSISTANT, BASELINE_QUESTION, AGENT_STREAM
    )


async def _run_node(node: str, test_file: str, env: dict[str, str]) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        node,
        "--import",
        "./resolve.mjs",
        "--test",
        "--test-concurrency=1",
        test_file,
        cwd=PROOF,
        env={**os.environ, "COPILOTKIT_TELEMETRY_DISABLED": "true", **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), NODE_TIMEOUT)
    except TimeoutError:
        process.kill()
        output, _ = await process.communicate()
        pytest.fail(f"node did not finish in {NODE_TIMEOUT:g}s:\n{output.decode(errors='replace')}")
    assert process.returncode is not None
    return process.returncode, output.decode(errors="replace")


def _bare_ending(result: dict[str, Any]) -> str:
    """What the bare client ended each turn with, in words."""
    endings = []
    for outcome in result["outcomes"]:
        if outcome["clientError"] or outcome["runError"]:
            endings.append(f"error ({outcome['runError'] or outcome['clientError']})")
        elif outcome["exact"]:
            endings.append("finished, whole answer")
        else:
            endings.append(f"finished, {outcome['shown']} of {outcome['route']} chars")
    return "; ".join(endings) + f"; {result['runs']} run(s)"


async def test_copilot_runtime_through_every_cut(server: DevServer, tmp_path: Path) -> None:
    node = proof_node()
    total = await _agent_stream_bytes(server)
    faults = cuts(total)
    proxies: dict[str, FaultProxy] = {}
    try:
        spec: dict[str, dict[str, Any]] = {}
        for index, (name, (fault, turns)) in enumerate(faults.items()):
            classes = (*EVERY_CUT, ONE_CUT) if index == 0 else EVERY_CUT
            for agent_class in classes:
                # Node's fetch keeps connections alive: one request per connection, so
                # the proxy sees each run stream.
                proxies[f"{name} / {agent_class}"] = await jstools.OneRequestProxy(
                    server.port, fault
                ).start()
            spec[name] = {
                "turns": turns,
                "proxies": {c: proxies[f"{name} / {c}"].url for c in classes},
            }
        report_path = tmp_path / "report.json"
        code, output = await _run_node(
            node,
            "copilotkit.test.mjs",
            {
                "EVOSCI_DIRECT_URL": server.url,
                "EVOSCI_CK_CUTS": json.dumps(spec),
                "EVOSCI_CK_REPORT": str(report_path),
            },
        )
    finally:
        for proxy in proxies.values():
            await proxy.stop()
    stats = {name: vars(proxy.stats) for name, proxy in proxies.items()}
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    figures = {
        name: _bare_ending(entry["bare"]) for name, entry in report.items() if "bare" in entry
    }
    context = (
        f"baseline {total} B\nbare: {json.dumps(figures, indent=1)}\n"
        f"report: {json.dumps(report)}\nproxies: {json.dumps(stats)}\n--- node ---\n{output}"
    )
    print(context)  # shown with -s, and by pytest on failure
    assert code == 0, context
    assert "# fail 0" in output and "# skipped 0" in output, context
    assert f"# pass {len(proxies)}" in output, context
    for name, proxy in proxies.items():
        assert proxy.stats.fired >= 1, f"{name}: the cut never broke a stream; {context}"
    for name, (_, turns) in faults.items():
        if name.endswith("once per turn"):
            for agent_class in (*EVERY_CUT, ONE_CUT):
                fired = proxies[f"{name} / {agent_class}"].stats.fired
                assert fired == turns, f"{name} / {agent_class}: {fired} cuts; {context}"
    # The control: bare, no cut leaves the client finished on the whole answer.
    for name, entry in report.items():
        for turn, outcome in enumerate(entry["bare"]["outcomes"], 1):
            whole = outcome["finished"] and outcome["exact"] and not outcome["runError"]
            assert not whole, f"{name}, turn {turn}: bare survived the cut; {context}"


async def test_without_a_cut_the_drop_in_sends_what_langgraph_agent_sends(
    server: DevServer,
) -> None:
    """Tool calls, state snapshots and an interrupt pass through unchanged (bare and
    adopted send the same events); a failed run ends on the route's ``RUN_ERROR``."""
    node = proof_node()
    graphs = {name: name for name in PASSTHROUGH_GRAPHS}
    code, output = await _run_node(
        node,
        "passthrough.test.mjs",
        {"EVOSCI_DIRECT_URL": server.url, "EVOSCI_CK_GRAPHS": json.dumps(graphs)},
    )
    print(output)
    assert code == 0, output
    assert "# pass 3" in output and "# fail 0" in output, output


PAGE_TIMEOUT_MS = 120_000
ASK = "q => { window.chat.ask(q); }"
ENDED = "() => !['idle', 'running'].includes(document.querySelector('#status').textContent)"


async def test_a_copilotkit_page_in_chromium_through_a_cut(
    server: DevServer, tmp_path: Path
) -> None:
    """@copilotkit/react-core's provider and ``useAgent`` in Debian's chromium, against
    the runtime, the run's stream cut mid-answer between runtime and server: bare, the
    page ends on an error; adopted, finished on the route's exact text, one run."""
    node = proof_node()
    jstools.chromium()  # before the page's build: there must be a browser to run it
    page_dir = tmp_path / "page"
    build = await asyncio.create_subprocess_exec(
        node, "page/build.mjs", str(page_dir), cwd=PROOF, stderr=asyncio.subprocess.PIPE
    )
    _, errors = await build.communicate()
    assert build.returncode == 0, errors.decode(errors="replace")
    total = await _agent_stream_bytes(server)
    fault = Fault("cut", int(MID * total), match=("/runs/stream",))
    proxies = {
        name: await jstools.OneRequestProxy(server.port, fault).start() for name in EVERY_CUT
    }
    specs = {name: {"agent": name, "deploymentUrl": p.url} for name, p in proxies.items()}
    # The runtime's log (the bare run's verifier error among it), kept for a failure.
    log = (tmp_path / "serve.log").open("wb")
    serving = await asyncio.create_subprocess_exec(
        node,
        "--import",
        "./resolve.mjs",
        "page/serve.mjs",
        cwd=PROOF,
        env={
            **os.environ,
            "COPILOTKIT_TELEMETRY_DISABLED": "true",
            "EVOSCI_CK_PAGE_AGENTS": json.dumps(specs),
            "EVOSCI_CK_PAGE_DIR": str(page_dir),
        },
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
    )
    assert serving.stdin is not None and serving.stdout is not None
    shown: dict[str, dict[str, Any]] = {}
    try:
        runtimes = json.loads(await asyncio.wait_for(serving.stdout.readline(), 120))
        async with headless_chromium() as browser:
            for name, runtime in runtimes.items():
                thread_id = await new_thread(server.url)
                page = await browser.new_page()
                await page.goto(
                    f"{runtime['origin']}/page/?runtime={runtime['url']}"
                    f"&agent={ASSISTANT}&thread={thread_id}"
                )
                await page.wait_for_function("() => window.chat", timeout=PAGE_TIMEOUT_MS)
                await page.evaluate(ASK, BASELINE_QUESTION)
                await page.wait_for_function(ENDED, timeout=PAGE_TIMEOUT_MS)
                shown[name] = {
                    "status": await page.text_content("#status"),
                    "answer": await page.text_content("#answer"),
                    "route": await _route_text(server, thread_id),
                    "runs": len(await _runs(server, thread_id)),
                }
                await page.close()
    finally:
        serving.stdin.close()
        await asyncio.wait_for(serving.wait(), 30)
        log.close()
        for proxy in proxies.values():
            await proxy.stop()
    context = json.dumps(
        {
            n: {**v, "answer": len(v["answer"] or ""), "route": len(v["route"])}
            for n, v in shown.items()
        }
    )
    print(context)
    for name, proxy in proxies.items():
        assert proxy.stats.fired == 1, f"{name}: the cut did not break the run's stream; {context}"
    adopted = shown["adopted"]
    assert adopted["status"] == "finished", context
    assert adopted["answer"] == adopted["route"], context
    assert adopted["runs"] == 1, context
    bare = shown["bare"]
    assert not (bare["status"] == "finished" and bare["answer"] == bare["route"]), context


async def _route_text(server: DevServer, thread_id: str) -> str:
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        response = await http.get(
            f"/api/threads/{thread_id}/final-answer", params={"format": "text", "wait": 30}
        )
        response.raise_for_status()
        assert response.headers["x-answer-complete"] == "true"
        return response.text


async def _runs(server: DevServer, thread_id: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        response = await http.get(f"/threads/{thread_id}/runs", params={"limit": 50})
        response.raise_for_status()
        runs: list[dict[str, Any]] = response.json()
        return runs


def test_the_declarations_typecheck_against_the_real_packages() -> None:
    """tsc on tests/js/copilotkit/types.ts: types/ag-ui.d.ts as a runtime's route uses it,
    @ag-ui/langgraph's and @copilotkit/runtime's own declarations beneath it."""
    node = proof_node()
    tsc = jstools.NODE_MODULES / "typescript" / "bin" / "tsc"
    result = subprocess.run(
        [node, str(tsc), "--noEmit", "-p", str(PROOF)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
