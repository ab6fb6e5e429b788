"""CopilotKit: a real ``CopilotRuntime`` serving @ag-ui/langgraph's ``LangGraphAgent``, bare
and as ``@evoscientist/final-answer/ag-ui``'s drop-in, against a real ``langgraph dev``
behind a fault proxy, read by a real AG-UI client (tests/js/copilotkit/copilotkit.test.mjs)
and a CopilotKit page in chromium. Adopted, every turn ends on the route's exact text
with one run per request; bare is measured (docs/front-ends/copilotkit.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.support import browser_copilotkit as ck
from tests.support import browser_stop, jstools
from tests.support import browser_table as table
from tests.support.browser_copilotkit import (
    MID,
    PROOF,
    RUN_POST,
    RUN_STREAMS,
    PageRuntime,
    PageServer,
    healthy_stream_bytes,
)
from tests.support.browser_turns import PATIENCE_S, ask, cell
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer, langgraph_dev
from tests.support.slow_agent_graph import SLOW_GRAPH
from tests.support.slow_agent_graph import SPEC as SLOW_SPEC

# The page's tests share the session's Chromium (tests/js/conftest.py), bound to its loop.
pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="session")]

SERVER_ENV = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"}
NODE_TIMEOUT = 300.0
# The graphs beside the project's agent (graph id → repo-relative spec): passthrough.test.mjs's,
# and the paced agent the page asks (a "(slow)" question is answered slowly, so that a Stop
# or a thread switch lands mid-run; any other at the server's pace).
PASSTHROUGH_GRAPHS = {
    "interrupt": "tests/support/interrupt_graph.py:graph",
    "failing": "tests/support/failing_graph.py:graph",
}
GRAPHS = {**PASSTHROUGH_GRAPHS, SLOW_GRAPH: SLOW_SPEC}


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
        root / "work", root / "data", env=SERVER_ENV, extra_graphs=GRAPHS
    ) as started:
        yield started


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stream_bytes(server: DevServer) -> int:
    """Bytes of one healthy run stream with LangGraphAgent's stream modes."""
    return await healthy_stream_bytes(server)


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


async def test_copilot_runtime_through_every_cut(
    server: DevServer, stream_bytes: int, tmp_path: Path
) -> None:
    node = proof_node()
    faults = cuts(stream_bytes)
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
        f"baseline {stream_bytes} B\nbare: {json.dumps(figures, indent=1)}\n"
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


# ---- a CopilotKit page in Chromium (tests/support/browser_copilotkit.py)

ASK = "q => { window.chat.ask(q); }"
ENDED = "() => !['idle', 'running'].includes(document.querySelector('#status').textContent)"
KINDS = ("bare", "adopted")


@pytest.fixture(scope="module")
def page_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = proof_node()
    jstools.chromium()  # before the page's build: there must be a browser to run it
    return ck.build_page(node, tmp_path_factory.mktemp("copilotkit-page"))


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def pages(
    page_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[PageServer]:
    """The page's runtimes, in one node process (its log, the bare run's verifier errors
    among it, kept beside the page)."""
    log = tmp_path_factory.mktemp("copilotkit-serve") / "serve.log"
    async with PageServer.running(proof_node(), page_dir, log) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def runtimes(pages: PageServer, server: DevServer) -> AsyncIterator[dict[str, PageRuntime]]:
    """A runtime per agent class, bare and adopted, asking the paced agent through a proxy
    of its own (each test arms it with its fault)."""
    proxies = {kind: await jstools.OneRequestProxy(server.port, Fault()).start() for kind in KINDS}
    try:
        yield {kind: await pages.runtime(kind, proxies[kind], SLOW_GRAPH) for kind in KINDS}
    finally:
        for proxy in proxies.values():
            await proxy.stop()


async def _one_turn_through(
    browser: Browser, server: DevServer, runtime: PageRuntime, fault: Fault
) -> dict[str, Any]:
    """One question on the page through ``fault``: how its AG-UI run ended, what it shows."""
    runtime.proxy.arm(fault)
    try:
        async with ck.on_page(browser, runtime.page_url()) as page:
            await page.evaluate(ASK, ck.BASELINE_QUESTION)
            await page.wait_for_function(ENDED, timeout=PATIENCE_S * 3000)
            thread_id = await page.evaluate("() => document.querySelector('#chat').dataset.thread")
            return {
                "status": await page.text_content("#status"),
                "answer": await page.text_content("#answer"),
                "route": await _route_text(server, thread_id),
                "runs": len(await _runs(server, thread_id)),
                "fired": runtime.proxy.stats.fired,
            }
    finally:
        runtime.proxy.arm(Fault())


async def test_a_copilotkit_page_in_chromium_through_a_cut(
    browser: Browser, server: DevServer, runtimes: dict[str, PageRuntime], stream_bytes: int
) -> None:
    """@copilotkit/react-core's provider and ``useAgent`` in Debian's chromium, against
    the runtime, the run's stream cut mid-answer between runtime and server: bare, the
    page ends on an error; adopted, finished on the route's exact text, one run."""
    fault = Fault("cut", int(MID * stream_bytes), match=RUN_POST)
    # Side by side: each page on its own runtime, proxy and thread.
    ended = await asyncio.gather(
        *(_one_turn_through(browser, server, runtimes[kind], fault) for kind in KINDS)
    )
    shown = dict(zip(KINDS, ended, strict=True))
    context = json.dumps(
        {
            n: {**v, "answer": len(v["answer"] or ""), "route": len(v["route"])}
            for n, v in shown.items()
        }
    )
    print(context)
    for kind in KINDS:
        assert shown[kind]["fired"] == 1, (
            f"{kind}: the cut did not break the run's stream; {context}"
        )
    adopted = shown["adopted"]
    assert adopted["status"] == "finished", context
    assert adopted["answer"] == adopted["route"], context
    assert adopted["runs"] == 1, context
    bare = shown["bare"]
    assert not (bare["status"] == "finished" and bare["answer"] == bare["route"]), context


async def test_stop_and_a_thread_switch_on_the_adopted_page(
    browser: Browser, server: DevServer, runtimes: dict[str, PageRuntime]
) -> None:
    """One page, as a user goes: Stop mid-answer, Stop 1 s after a cut (the drop-in
    following the run), a next question, then a thread left mid-run and shown again after
    its run's end. Each stopped run is cancelled within 3 s and its turn keeps the text shown
    at Stop; the next answer is exact; one run per submit (tests/support/browser_stop.py)."""
    runtime = runtimes["adopted"]
    async with ck.on_page(browser, runtime.page_url()) as page:
        # The page's Stop is a request to the runtime; what the runtime sent before it
        # arrived still shows, then nothing more (browser_stop.stop_turn).
        session = await browser_stop.user_session(
            page, server.url, runtime.proxy, stop_is_a_request=True
        )
    runtime.proxy.arm(Fault())
    print(session)
    assert not session.failures(), f"{session.failures()}; {session!r}\n{session.timeline}"


async def test_a_stop_after_a_cut_never_blinks_while_the_thread_is_read_again(
    browser: Browser, server: DevServer, runtimes: dict[str, PageRuntime]
) -> None:
    """From Stop on, no frame shows fewer messages or characters than at Stop, though
    the thread's reads (the runtime's, through its proxy) answer 1 s late
    (tests/support/browser_stop.py)."""
    runtime = runtimes["adopted"]
    async with ck.on_page(browser, runtime.page_url()) as page:
        stopped = await browser_stop.stop_after_a_cut_with_late_reads(
            page, server.url, runtime.proxy, stop_is_a_request=True
        )
    runtime.proxy.arm(Fault())
    assert stopped.at_stop and not stopped.blinks(), (
        f"{stopped.blinks()}; {stopped!r}\n{stopped.timeline}"
    )


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


async def test_the_declarations_typecheck_against_the_real_packages() -> None:
    """tsc on tests/js/copilotkit/types.ts: types/ag-ui.d.ts as a runtime's route uses it,
    @ag-ui/langgraph's and @copilotkit/runtime's own declarations beneath it."""
    node = proof_node()
    tsc = jstools.NODE_MODULES / "typescript" / "bin" / "tsc"
    # Async (in a thread) as the module's other tests are: they share the session's loop.
    result = await asyncio.to_thread(
        subprocess.run,
        [node, str(tsc), "--noEmit", "-p", str(PROOF)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# ---- the measured table (docs/webui-browser-table.md): CopilotKit's columns

TABLE = os.environ.get("EVOSCIENTIST_BROWSER_TABLE")
COLUMNS = {"bare": "bare", "+ recovery": "adopted"}
RESTART = "server restarted mid-run"


async def _fault_cell(
    browser: Browser, runtime: PageRuntime, server: DevServer, row: ck.Row, stream_bytes: int
) -> str:
    runtime.proxy.arm(row.fault(stream_bytes))
    try:
        async with ck.on_page(browser, runtime.page_url()) as page:
            if row.reload_after_s is None:
                turns = await ask(page, server.url, row.turns)
            else:
                turns = [await ck.reload_turn(page, server.url, row.reload_after_s, PATIENCE_S)]
    finally:
        runtime.proxy.arm(Fault())
    return cell(turns)


async def _stop_cell(
    browser: Browser, runtime: PageRuntime, server: DevServer, after_cut_s: float | None
) -> str:
    async with ck.on_page(browser, runtime.page_url()) as page:
        stopped = await browser_stop.ask_and_stop(
            page, server.url, runtime.proxy, stop_after_cut_s=after_cut_s, stop_is_a_request=True
        )
    runtime.proxy.arm(Fault())
    return stopped.verdict()


async def _switch_cell(browser: Browser, runtime: PageRuntime, server: DevServer) -> str:
    async with ck.on_page(browser, runtime.page_url()) as page:
        return (await browser_stop.switch_away_and_back(page, server.url)).verdict()


def _proof_version(*names: str) -> str:
    path = PROOF.joinpath("node_modules", *names, "package.json")
    return str(json.loads(path.read_text())["version"])


@pytest.mark.skipif(not TABLE, reason="EVOSCIENTIST_BROWSER_TABLE not set")
async def test_measure_the_browser_table(
    browser: Browser,
    server: DevServer,
    pages: PageServer,
    runtimes: dict[str, PageRuntime],
    stream_bytes: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Every row on the CopilotKit page, bare and adopted, the cut between the runtime
    and the server, merged into the table as the CopilotKit group."""
    assert TABLE is not None
    rows: dict[str, dict[str, str]] = {}
    for name, row in ck.FAULT_ROWS.items():
        rows[name] = {
            column: await _fault_cell(browser, runtimes[kind], server, row, stream_bytes)
            for column, kind in COLUMNS.items()
        }
    rows[RESTART] = {}
    for column, kind in COLUMNS.items():
        root = tmp_path_factory.mktemp(f"table-restart-{kind}")
        turn = await ck.restart_mid_run(browser, pages, kind, root, SERVER_ENV, GRAPHS)
        rows[RESTART][column] = cell([turn])
    for name, after_cut_s in browser_stop.STOP_ROWS.items():
        rows[name] = {
            column: await _stop_cell(browser, runtimes[kind], server, after_cut_s)
            for column, kind in COLUMNS.items()
        }
    rows[browser_stop.SWITCH] = {
        column: await _switch_cell(browser, runtimes[kind], server)
        for column, kind in COLUMNS.items()
    }
    measured_on = (
        f"@copilotkit/react-core {_proof_version('@copilotkit', 'react-core')} in the browser,"
        f" @copilotkit/runtime {_proof_version('@copilotkit', 'runtime')} with"
        f" @ag-ui/langgraph {_proof_version('@ag-ui', 'langgraph')} (`LangGraphAgent`; the"
        " cut between the runtime and the server), @ag-ui/client"
        f" {_proof_version('@ag-ui', 'client')}, {table.environment(browser)}"
    )
    print(table.record(TABLE, table.COPILOTKIT, measured_on, rows))
    table.assert_recovery_exact(rows, ["+ recovery"])
