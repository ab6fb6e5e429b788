"""The WebUI's adoption, proven in a real browser: a React chat page using
``useStreamWithRecovery`` as a chat app uses ``useStream``, against a real ``langgraph
dev`` behind a fault-injecting proxy, on each SDK of ``jstools.SDKS``. With
``EVOSCIENTIST_BROWSER_TABLE=path`` it also measures that SDK's columns of the table
(``make webui-browser-table``).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.support import browser_langchain as lc
from tests.support import browser_stop, jstools
from tests.support import browser_table as table
from tests.support.browser_page import (
    SUBMIT,
    Shown,
    distinct_lengths,
    nth_run,
    open_chat,
    run_end,
    shown_after_run,
    squash,
    static_site,
    stream_modes,
    thread_of,
    watch_texts,
)
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="session")]

# langgraph-api's CORS when langgraph.json sets none: `Location` is not exposed.
DEFAULT_CORS = {
    "allow_origins": ["*"],
    "allow_methods": ["*"],
    "allow_headers": ["*"],
    "expose_headers": ["x-pagination-total", "x-pagination-next", "content-location"],
}
RUN_STREAMS = ("/runs/stream",)  # the submits' POSTs, not the join streams
MID = 0.7  # of a healthy stream's bytes: inside the answer's tokens
_questions = itertools.count(1)


@dataclass(frozen=True)
class Scenario:
    fault: Callable[[int], Fault]  # from a healthy stream's size in bytes
    turns: int = 1
    # Seconds after the run exists to reload the page (its mount rejoins the run).
    reload_after_s: float | None = None


SCENARIOS: dict[str, Scenario] = {
    "no fault": Scenario(lambda total: Fault()),
    "cut before the response": Scenario(lambda total: Fault("cut", 0)),
    "cut before the request reaches the server; it arrives 0.5 s later": Scenario(
        lambda total: Fault("late", match=RUN_STREAMS, delay=0.5)
    ),
    "cut mid-answer": Scenario(lambda total: Fault("cut", int(MID * total))),
    "reset (RST) mid-answer": Scenario(lambda total: Fault("reset", int(MID * total))),
    "stall mid-answer": Scenario(lambda total: Fault("stall", int(MID * total))),
    "cut mid-answer, every reconnect cut": Scenario(
        lambda total: Fault("cut", int(MID * total), times=None, then_after_bytes=0)
    ),
    "two runs in one page, both cut": Scenario(
        lambda total: Fault("cut", int(MID * total), times=2, match=RUN_STREAMS), turns=2
    ),
    "cut, then reload: the rejoin cut too": Scenario(
        lambda total: Fault("cut", int(0.3 * total), times=None),
        reload_after_s=0.5,
    ),
}
HOOKS = {
    "useStream (langgraph's default CORS)": ("bare", "default"),
    "useStream + Location exposed": ("bare", "repo"),
    "useStreamWithRecovery": ("recovery", "repo"),
}


def _server(root: Path, name: str, env: dict[str, str]) -> AbstractContextManager[DevServer]:
    """A server as the browser modules' own (runs of a few seconds, so that a reload lands
    mid-run), with ``env``."""
    return lc.server(root / name, env=env)


@pytest.fixture(scope="module")
def server(api: DevServer) -> DevServer:
    """The repository's langgraph.json, `http.cors` included (the browser modules' own)."""
    return api


@pytest.fixture(scope="module", params=jstools.sdk_params(__name__, split=False))
def sdk(request: pytest.FixtureRequest) -> str:
    """The @langchain/langgraph-sdk version the pages are bundled with."""
    return str(request.param)


@pytest.fixture(scope="module")
def site(pages: Callable[[str | None], Path], sdk: str) -> Iterator[str]:
    page = pages(sdk)
    bundled = json.loads((page / "sdk.json").read_text())["version"]
    assert bundled == sdk, f"the pages bundle SDK {bundled}, not {sdk}"
    with static_site(page) as url:
        yield url


async def run_scenario(
    browser: Browser,
    site: str,
    api: DevServer,
    scenario: Scenario,
    hook: str,
    stream_bytes: int,
    late_wait_s: float = 0.0,
) -> tuple[list[Shown], FaultProxy]:
    """Open a page through a proxy with the scenario's fault; ask ``turns`` questions."""
    context = await browser.new_context()
    proxy = await jstools.OneRequestProxy(api.port, scenario.fault(stream_bytes)).start()
    try:
        page = await context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
        await open_chat(page, site, proxy.url, hook)
        shown: list[Shown] = []
        for _ in range(scenario.turns):
            question = f"Browser question {next(_questions):04d}: which control group fits?"
            runs_before = sum(run.runs for run in shown)
            await page.evaluate(SUBMIT, question)
            shown.append(
                await shown_after_run(
                    page,
                    api.url,
                    runs_before,
                    reload_after_s=scenario.reload_after_s,
                    late_wait_s=late_wait_s,
                )
            )
        if os.environ.get("EVOSCIENTIST_BROWSER_CONSOLE"):
            print("\n".join(console))
        return shown, proxy
    finally:
        await context.close()
        await proxy.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stream_bytes(browser: Browser, site: str, server: DevServer) -> int:
    """Bytes of one healthy run stream as the page asks for it, to place faults in."""
    shown, proxy = await run_scenario(browser, site, server, SCENARIOS["no fault"], "bare", 0)
    assert shown[0].exact, shown
    return max(proxy.stats.downstream_bytes)


@pytest.mark.parametrize("name", [name for name in SCENARIOS if name != "no fault"])
async def test_the_page_shows_the_route_answer_after_every_fault(
    name: str, browser: Browser, site: str, server: DevServer, stream_bytes: int
) -> None:
    scenario = SCENARIOS[name]
    shown, proxy = await run_scenario(
        browser, site, server, scenario, "recovery", stream_bytes, late_wait_s=10
    )
    context = f"{name}: proxy {json.dumps(vars(proxy.stats))}; shown {shown!r}"
    assert proxy.stats.fired >= scenario.turns, f"the fault never broke a stream; {context}"
    for turn, run in enumerate(shown, start=1):
        assert run.exact, f"run {turn}: not the route's answer 1 s after its end; {context}"
        assert run.delay is not None and run.delay <= 1.0, context
        assert not run.doubled, f"run {turn}: a prefix shows twice; {context}"
        assert run.runs == 1, f"run {turn}: the submit made {run.runs} runs; {context}"
        assert run.tool_calls >= turn, f"run {turn}: tool calls not rendered; {context}"
        # Not still busy: SDK 1.9's isLoading outlived the stream the hook ended by a
        # reconnect backoff (16-25 s on the real WebUI).
        loading = json.loads(run.page_state).get("loading")
        assert loading == "false", f"run {turn}: still loading 1 s after its end; {context}"
    # The thread goes on from the recovered turn: earlier answers are still shown.
    for earlier in shown[:-1]:
        assert earlier.head in squash(shown[-1].body), f"a turn was lost; {context}"


# ---- what a user does mid-run: Stop (mid-answer, and while recovering a cut), a thread
# switch (tests/support/browser_stop.py)


async def test_a_stop_keeps_what_was_shown_through_the_next_question_and_a_thread_switch(
    browser: Browser, site: str, server: DevServer
) -> None:
    url_of = browser_stop.paced(lambda api: f"{site}/index.html?api={api}&hook=recovery")
    session = await browser_stop.session_on(browser, url_of, server)
    assert not session.failures(), f"{session.failures()}; {session!r}\n{session.timeline}"


async def test_a_stop_after_a_cut_never_blinks_while_the_thread_is_read_again(
    browser: Browser, site: str, server: DevServer
) -> None:
    """From Stop on, no frame shows fewer messages or characters than at Stop, though
    the thread's history answers 1 s late (a WebUI page once showed an empty conversation
    for one frame: the thread read again after the Stop, said to be loading)."""
    url_of = browser_stop.paced(lambda api: f"{site}/index.html?api={api}&hook=recovery")
    stopped = await browser_stop.stop_after_a_cut_on_a_new_thread(browser, url_of, server)
    assert stopped.at_stop and not stopped.blinks(), (
        f"{stopped.blinks()}; {stopped!r}\n{stopped.timeline}"
    )


# ---- a healthy run streams as with bare useStream

STREAMED_RUNS = 2  # the second run shows what the first one's settling asked for


async def _streamed(
    browser: Browser, site: str, api: DevServer, hook: str, reads: str
) -> list[dict[str, Any]]:
    """Per run of one page reading only ``reads``: the distinct lengths the answer showed,
    the stream modes the run asked for, and the answer shown 1 s after its end."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(f"{site}/streaming.html?api={api.url}&hook={hook}&reads={reads}")
        await page.wait_for_function("() => window.chat !== undefined")
        runs: list[dict[str, Any]] = []
        for n in range(1, STREAMED_RUNS + 1):
            await watch_texts(page)
            question = f"Streaming question {next(_questions):04d}: which control group fits?"
            await page.evaluate(SUBMIT, question)
            thread_id = await thread_of(page)
            run_id = await nth_run(api.url, thread_id, n)
            _, expected, message_id = await run_end(api.url, thread_id, run_id)
            await asyncio.sleep(1.0)
            shown = await page.evaluate(
                "([id]) => document.querySelector(`.msg[data-id='${id}'] .text`)?.textContent",
                [message_id],
            )
            runs.append(
                {
                    "lengths": await distinct_lengths(page, message_id),
                    "modes": await stream_modes(api.url, thread_id, run_id),
                    "exact": shown == expected,
                    "chars": len(expected),
                }
            )
        return runs
    finally:
        await context.close()


@pytest.mark.parametrize("reads", ["messages", "values"])
async def test_a_healthy_run_streams_as_with_bare_use_stream(
    reads: str, browser: Browser, site: str, server: DevServer
) -> None:
    """The SDK asks for the stream modes of the fields the page reads: through the hook,
    a page reading only ``messages`` must still get ``messages-tuple`` (tokens), and one
    reading only ``values`` must get no more than bare ``useStream`` gives it."""
    # Side by side: each page asks on its own thread.
    bare, hook = await asyncio.gather(
        _streamed(browser, site, server, "bare", reads),
        _streamed(browser, site, server, "recovery", reads),
    )
    context = f"reads {reads}: bare {bare}; useStreamWithRecovery {hook}"
    print(context)
    if reads == "messages":
        assert all(run["lengths"] >= 10 for run in bare), f"bare never streamed; {context}"
    for with_bare, with_hook in zip(bare, hook, strict=True):
        assert with_hook["modes"] == with_bare["modes"], context
        assert with_hook["lengths"] * 2 >= with_bare["lengths"], context
        assert with_hook["exact"] and with_bare["exact"], context


# ---- the measured table (docs/webui-browser-table.md)

TABLE = os.environ.get("EVOSCIENTIST_BROWSER_TABLE")
RESTART = "server restarted mid-run"


@pytest.mark.skipif(not TABLE, reason="EVOSCIENTIST_BROWSER_TABLE not set")
async def test_measure_the_browser_table(
    browser: Browser,
    site: str,
    sdk: str,
    server: DevServer,
    stream_bytes: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The ``useStream`` columns on this SDK, merged into the table as its own group."""
    assert TABLE is not None
    root = tmp_path_factory.mktemp("default-cors")
    with _server(root, "default", {"CORS_CONFIG": json.dumps(DEFAULT_CORS)}) as default:
        servers = {"repo": server, "default": default}
        rows: dict[str, dict[str, str]] = {}
        for name, scenario in SCENARIOS.items():
            rows[name] = {}
            for column, (hook, which) in HOOKS.items():
                shown, _ = await run_scenario(
                    browser, site, servers[which], scenario, hook, stream_bytes, late_wait_s=10
                )
                rows[name][column] = table.cell(shown)
                await asyncio.sleep(0)
        for column, (hook, which) in HOOKS.items():
            paced = browser_stop.paced(functools.partial(_sdk_page_url, site, hook=hook))
            for name, value in (
                await browser_stop.user_rows(browser, paced, servers[which])
            ).items():
                rows.setdefault(name, {})[column] = value
    rows[RESTART] = {}
    for column, (hook, which) in HOOKS.items():
        env = {"CORS_CONFIG": json.dumps(DEFAULT_CORS)} if which == "default" else {}
        url_of = functools.partial(_sdk_page_url, site, hook=hook)
        restart_root = tmp_path_factory.mktemp("restart")
        rows[RESTART][column] = table.cell(
            [await lc.restart_mid_run(browser, restart_root, url_of, env)]
        )
    measured_on = f"@langchain/langgraph-sdk {sdk} (`useStream`), {table.environment(browser)}"
    print(table.record(TABLE, table.sdk_group(sdk), measured_on, rows))
    table.assert_recovery_exact(rows, ["useStreamWithRecovery"])


def _sdk_page_url(site: str, api: str, hook: str) -> str:
    return f"{site}/index.html?api={api}&hook={hook}"
