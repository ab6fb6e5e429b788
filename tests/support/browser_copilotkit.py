"""The CopilotKit page (tests/js/copilotkit/page/page.jsx) in a real browser, its runtime's
``LangGraphAgent`` reaching a real ``langgraph dev`` through the fault proxy, so the cut
is between the runtime and the server; the rows of docs/webui-browser-table.md as they
apply to that hop, for tests/js/test_copilotkit.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Browser, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.support import jstools
from tests.support.browser_langchain import answer_streaming, question, server
from tests.support.browser_page import SUBMIT, nth_run, run_end, run_status, runs_of, thread_of
from tests.support.browser_turns import FAULT_ROWS as TURNS_ROWS
from tests.support.browser_turns import MID, PATIENCE_S, RUN_POST, Row, Turn, open_page
from tests.support.proxy import Fault, FaultProxy, measure_stream_bytes
from tests.support.servers import DevServer, free_port, new_thread, runs_written, stop
from tests.support.slow_agent_graph import SLOW_GRAPH, SLOWER

PROOF = jstools.REPO / "tests" / "js" / "copilotkit"
ASSISTANT = "EvoScientist"
# LangGraphAgent's own stream request: its default stream modes, with subgraphs.
AGENT_STREAM = {
    "stream_mode": ["events", "values", "updates", "messages-tuple"],
    "stream_subgraphs": True,
}
BASELINE_QUESTION = "What is a control group?"  # also copilotkit.test.mjs's first
RUN_STREAMS = ("/runs/stream", "/stream")  # the submit and the SDK's rejoins of it
RUNTIME_START_S = 120.0  # node loading the runtime's packages, on a loaded machine
ENV = {"COPILOTKIT_TELEMETRY_DISABLED": "true"}  # a test runtime phones nowhere


async def healthy_stream_bytes(api: DevServer) -> int:
    """Bytes of one healthy run stream as LangGraphAgent asks for it, to place faults."""
    thread_id = await new_thread(api.url)
    return await measure_stream_bytes(
        api.port, thread_id, ASSISTANT, BASELINE_QUESTION, AGENT_STREAM
    )


def build_page(node: str, outdir: Path) -> Path:
    """Bundle page.jsx (page/build.mjs) into ``outdir``."""
    subprocess.run(
        [node, "page/build.mjs", str(outdir)],
        cwd=PROOF,
        check=True,
        capture_output=True,
        timeout=180,
    )
    return outdir


@dataclass
class PageRuntime:
    """One runtime serving the page, its agent (``kind``: runtime.mjs's AGENTS) reaching
    the langgraph server through ``proxy``."""

    kind: str
    url: str
    origin: str
    proxy: FaultProxy

    def page_url(self, thread_id: str | None = None) -> str:
        query = f"runtime={self.url}&agent={ASSISTANT}"
        return f"{self.origin}/page/?{query}" + (f"&thread={thread_id}" if thread_id else "")


class PageServer:
    """page/serve.mjs: the runtimes serving the page, all in one node process, started
    on demand (``runtime``)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    @asynccontextmanager
    async def running(cls, node: str, page_dir: Path, log_path: Path) -> AsyncIterator[PageServer]:
        with log_path.open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                node,
                "--import",
                "./resolve.mjs",
                "page/serve.mjs",
                cwd=PROOF,
                env={**os.environ, **ENV, "EVOSCI_CK_PAGE_DIR": str(page_dir)},
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
            )
            try:
                yield cls(process)
            finally:
                assert process.stdin is not None
                process.stdin.close()
                try:
                    await asyncio.wait_for(process.wait(), 30)
                except TimeoutError:
                    process.kill()
                    await process.wait()

    async def _printed(self) -> dict[str, dict[str, str]]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), RUNTIME_START_S)
        assert line, "page/serve.mjs exited (its log says why)"
        started: dict[str, dict[str, str]] = json.loads(line)
        return started

    async def runtime(self, kind: str, proxy: FaultProxy, graph_id: str = ASSISTANT) -> PageRuntime:
        """A new runtime whose agent (class ``kind``, graph ``graph_id``) talks to the
        server through ``proxy``."""
        assert self.process.stdin is not None
        spec = {kind: {"agent": kind, "deploymentUrl": proxy.url, "graphId": graph_id}}
        self.process.stdin.write(json.dumps(spec).encode() + b"\n")
        await self.process.stdin.drain()
        started = (await self._printed())[kind]
        return PageRuntime(kind, started["url"], started["origin"], proxy)


@asynccontextmanager
async def on_page(browser: Browser, url: str) -> AsyncIterator[Page]:
    """The page at ``url`` in a browser context of its own, ready."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await open_page(page, url)
        yield page
    finally:
        await context.close()


# ---- the faults: the other front ends' rows (browser_turns), on the runtime's stream. The
# runtime's submit is its POST /threads/{id}/runs/stream (RUN_POST); it rejoins a cut
# stream itself, so "every reconnect cut" and "two runs" match its rejoins and count
# their cuts here, and a reload row is added.

FAULT_ROWS: dict[str, Row] = {
    **TURNS_ROWS,
    "cut mid-answer, every reconnect cut": Row(
        lambda total: Fault(
            "cut", int(MID * total), times=None, then_after_bytes=0, match=RUN_STREAMS
        )
    ),
    "two runs in one page, both cut": Row(
        lambda total: Fault("cut", int(MID * total), times=2, match=RUN_POST), turns=2
    ),
    # Cut early in the run and in every rejoin; the page reloaded half a second in.
    "cut, then reload: the rejoin cut too": Row(
        lambda total: Fault("cut", int(0.3 * total), times=None, match=RUN_STREAMS),
        reload_after_s=0.5,
    ),
}


async def _shown(
    page: Page, turn: int, expected: str, ended: float, patience_s: float
) -> tuple[str | None, float | None]:
    """The turn's answer once it is ``expected`` (or the patience is out), and how long
    after ``ended`` it showed."""
    delay: float | None = None
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_function(
            "([t, want]) => window.answers()[t] === want",
            arg=[turn, expected],
            timeout=max(0.0, ended + patience_s - time.monotonic()) * 1000,
            polling=20,
        )
        delay = time.monotonic() - ended
    answers = await page.evaluate("() => window.answers()")
    return (answers[turn] if turn < len(answers) else None), delay


async def _tool_calls(page: Page) -> int:
    return await page.locator(".part-tool").count()


async def reload_turn(page: Page, api: str, reload_after_s: float, patience_s: float) -> Turn:
    """One question; ``reload_after_s`` after its run exists the page is reloaded (it
    connects to its thread again, as CopilotChat does): what it shows after the run."""
    await page.evaluate(SUBMIT, question())
    thread_id = await thread_of(page)
    run_id = await nth_run(api, thread_id, 1, patience_s)
    await asyncio.sleep(reload_after_s)
    await page.reload()
    await page.wait_for_function("() => window.chat !== undefined && window.answers !== undefined")
    ended, expected, _ = await run_end(api, thread_id, run_id)
    answer, delay = await _shown(page, 0, expected, ended, patience_s)
    runs = len(await runs_of(api, thread_id))
    status = await run_status(api, thread_id, run_id)
    return Turn(
        expected, answer, delay, 0, runs, thread_id, run_id, status, await _tool_calls(page)
    )


async def restart_mid_run(
    browser: Browser,
    pages: PageServer,
    kind: str,
    root: Path,
    env: dict[str, str],
    graphs: dict[str, str],
    patience_s: float = PATIENCE_S,
) -> Turn:
    """One slow question on a page whose runtime reaches a server of its own; mid-answer,
    once the server has written the run to disk, the server is killed (SIGKILL: its event buffer
    and its streams gone) and started again on its port and data, where the run goes on.
    What the page shows after the run's end, the restarted server's."""
    port = free_port()
    proxy = await jstools.OneRequestProxy(port, Fault()).start()
    try:
        runtime = await pages.runtime(kind, proxy, SLOW_GRAPH)
        async with on_page(browser, runtime.page_url()) as page:
            with server(root, port, env, graphs) as first:
                await page.evaluate(SUBMIT, f"Restart {question()} {SLOWER}")
                thread_id = await thread_of(page)
                run_id = await nth_run(first.url, thread_id, 1)
                await answer_streaming(page)
                await runs_written(first)
                status = await run_status(first.url, thread_id, run_id)
                assert status == "running", f"the run was {status} before the restart"
                await asyncio.to_thread(stop, first.process, signal.SIGKILL)
            with server(root, port, env, graphs) as second:
                ended, expected, _ = await run_end(second.url, thread_id, run_id)
                answer, delay = await _shown(page, 0, expected, ended, patience_s)
                runs = len(await runs_of(second.url, thread_id))
                status = await run_status(second.url, thread_id, run_id)
                tools = await _tool_calls(page)
                return Turn(expected, answer, delay, 0, runs, thread_id, run_id, status, tools)
    finally:
        await proxy.stop()
