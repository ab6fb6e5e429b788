"""`@evoscientist/final-answer/langchain-react`, proven in a real browser: a React chat
page on @langchain/react's `useStream` (or, one import changed, `useStreamWithRecovery`),
served from another origin than a real ``langgraph dev`` and loaded in headless Debian
chromium, over SSE and over WebSocket; a fault-injecting proxy breaks the page's event
streams, or the server is killed mid-run and started again.

For every fault, 1 s after each run's end the page shows exactly the route's
``format=text`` answer, no prefix of it twice, the run's tool call, and message
instances (not plain objects). The bare binding, on a stream cut on every reconnect,
shows a truncated answer: what the recovery is for.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
from collections.abc import Awaitable, Callable

import httpx
import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.support import browser_stop, jstools
from tests.support import browser_table as table
from tests.support.browser_langchain import (
    INTERRUPTING,
    SCENARIOS,
    TRANSPORTS,
    healthy_stream_bytes,
    open_page,
    page_url,
    question,
    restart_mid_run,
    run_scenario,
)
from tests.support.browser_page import (
    ANSWER_OF,
    SUBMIT,
    distinct_lengths,
    nth_run,
    run_end,
    squash,
    thread_of,
    watch_texts,
)
from tests.support.interrupt_graph import REVIEW
from tests.support.servers import DevServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="session")]

StreamBytes = Callable[[str], Awaitable[int]]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stream_bytes(browser: Browser, site: str, api: DevServer) -> StreamBytes:
    """A healthy event stream's size per transport, measured on a transport's first use:
    a worker that runs one transport's tests measures that one only."""
    sizes: dict[str, int] = {}

    async def of(transport: str) -> int:
        if transport not in sizes:
            sizes.update(await healthy_stream_bytes(browser, site, api, (transport,)))
        return sizes[transport]

    return of


TRANSPORT_PARAMS = [pytest.param(t, id=t) for t in TRANSPORTS]


# How long a page stays open after its last run, watched for reconnects (the bare
# binding retries a cut event stream every ~1.5 s).
LINGER_S = 3.0


async def run_statuses(api: str, thread_id: str) -> set[str]:
    async with httpx.AsyncClient(base_url=api, timeout=10) as http:
        response = await http.get(f"/threads/{thread_id}/runs", params={"limit": 50})
        response.raise_for_status()
        return {run["status"] for run in response.json()}


FAULTS = [
    pytest.param(name, transport, id=f"{name}-{transport}")
    for name, scenario in SCENARIOS.items()
    for transport in TRANSPORTS
    if name != "no fault" and not scenario.restart and scenario.fault(1000, transport)
]


@pytest.mark.parametrize(("name", "transport"), FAULTS)
async def test_the_page_shows_the_route_answer_after_every_fault(
    name: str,
    transport: str,
    browser: Browser,
    site: str,
    api: DevServer,
    stream_bytes: StreamBytes,
) -> None:
    scenario = SCENARIOS[name]
    result = await run_scenario(
        browser,
        site,
        api,
        scenario,
        "recovery",
        transport,
        await stream_bytes(transport),
        10,
        LINGER_S,
    )
    assert result is not None
    shown, proxy = result.shown, result.proxy
    context = (
        f"{name} ({transport}): proxy {json.dumps(vars(proxy.stats))}; shown {shown!r}\n"
        f"page:\n{result.timeline}"
    )
    assert proxy.stats.fired >= 1, f"the fault never broke a stream; {context}"
    for turn, run in enumerate(shown, start=1):
        assert run.exact, f"run {turn}: not the route's answer 1 s after its end; {context}"
        assert run.delay is not None and run.delay <= 1.0, context
        assert not run.doubled, f"run {turn}: a prefix shows twice; {context}"
        assert run.tool_calls >= turn, f"run {turn}: tool calls not rendered; {context}"
        assert '"instances":"true"' in run.page_state, f"plain objects shown; {context}"
        assert run.runs == 1, f"run {turn}: {run.runs} runs for one submit; {context}"
    for earlier in shown[:-1]:
        assert earlier.head in squash(shown[-1].body), f"a turn was lost; {context}"
    assert not result.answers_shown_in_earlier_turns(), context
    # The binding's reconnect loop for a run the route called over has ended, and ended
    # without cancelling it: the server says the run succeeded.
    assert result.streams_after == 0, f"still reconnecting; {context}"
    for run in shown:
        assert await run_statuses(api.url, run.thread_id) == {"success"}, context


@pytest.mark.parametrize("transport", TRANSPORT_PARAMS)
async def test_bare_binding_ends_truncated_when_every_reconnect_is_cut(
    transport: str,
    browser: Browser,
    site: str,
    api: DevServer,
    stream_bytes: StreamBytes,
) -> None:
    """The control: the same fault without the recovery leaves the answer cut short."""
    scenario = SCENARIOS["cut mid-answer, every reconnect cut"]
    result = await run_scenario(
        browser, site, api, scenario, "bare", transport, await stream_bytes(transport), 0, LINGER_S
    )
    assert result is not None
    shown = result.shown
    assert not shown[0].exact, shown
    assert shown[0].verdict().startswith("truncated"), shown
    if transport == "sse":
        # Each replay delivers events before its cut, which resets the SSE transport's
        # attempts: it retries for as long as the page is open. (The WebSocket transport
        # gives up after its 5 attempts.)
        assert result.streams_after > 0, "the bare binding stopped reconnecting after the run"


async def test_bare_binding_runs_a_submit_cut_before_its_response_twice(
    browser: Browser, site: str, api: DevServer, stream_bytes: StreamBytes
) -> None:
    """The control: the binding's own client re-sends the cut `run.start` (its
    AsyncCaller retries "Failed to fetch"), and the server starts a second run."""
    scenario = SCENARIOS["cut before the response"]
    result = await run_scenario(
        browser, site, api, scenario, "bare", "sse", await stream_bytes("sse"), 10, 0
    )
    assert result is not None
    assert result.proxy.stats.fired >= 1, vars(result.proxy.stats)
    assert result.shown[0].runs == 2, result.shown


async def test_bare_binding_shows_nothing_when_its_socket_is_cut_at_run_start(
    browser: Browser, site: str, api: DevServer, stream_bytes: StreamBytes
) -> None:
    """The control over WebSocket: the socket carried `run.start` to the server and was
    cut before the command's answer. The server runs the turn once, but the binding's
    command failed and it shows none of the answer; nothing re-sends the command. (The
    drop-in's row in FAULTS: one run, the exact answer.)"""
    scenario = SCENARIOS["cut before the response"]
    result = await run_scenario(
        browser, site, api, scenario, "bare", "websocket", await stream_bytes("websocket"), 0, 0
    )
    assert result is not None
    assert result.proxy.stats.fired == 1, vars(result.proxy.stats)
    (run,) = result.shown
    assert run.runs == 1, run
    assert run.answer is None, run


@pytest.mark.parametrize("transport", TRANSPORT_PARAMS)
async def test_a_server_restarted_mid_run_ends_on_the_route_answer(
    transport: str,
    browser: Browser,
    site: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp(f"restart-{transport}")
    run = await restart_mid_run(
        browser, root, lambda api: page_url(site, api, "recovery", transport)
    )
    assert run.exact, run
    assert run.delay is not None and run.delay <= 1.0, run
    assert not run.doubled, run


SEEN = "() => window.chat.seen()"
IDLE = "() => !window.chat.seen().loading"


async def what_each_hook_shows(
    browser: Browser, site: str, api: str, transport: str, assistant: str, respond: str | None
) -> dict[str, list[dict]]:
    """For the bare binding and the drop-in: what the page shows once a run paused on an
    interrupt or ended, and (``respond``) once the run resumed with it ended."""
    ask = question()
    seen: dict[str, list[dict]] = {}
    for hook in ("bare", "recovery"):
        context = await browser.new_context()
        try:
            page = await context.new_page()
            await open_page(page, f"{page_url(site, api, hook, transport)}&assistant={assistant}")
            await page.evaluate(SUBMIT, ask)
            await page.wait_for_function(
                "() => window.chat.seen().messages.length > 1 && !window.chat.seen().loading",
                timeout=30_000,
            )
            await asyncio.sleep(SETTLE_S)  # the drop-in's route read lands after the end
            seen[hook] = [await page.evaluate(SEEN)]
            if respond is not None:
                await page.evaluate("v => window.chat.respond(v)", respond)
                await page.wait_for_function(
                    "() => window.chat.seen().messages.some(m => m.text.startsWith('Reviewed'))"
                    " && !window.chat.seen().loading",
                    timeout=30_000,
                )
                await asyncio.sleep(SETTLE_S)
                seen[hook].append(await page.evaluate(SEEN))
        finally:
            await context.close()
    return seen


# Past the drop-in's typical delay after a run's end (31-71 ms measured), with room.
SETTLE_S = 1.0


def shape(seen: dict) -> dict:
    """What is shown, bar the answer text (the drop-in shows the route's for it)."""
    messages = [
        {**m, "text": m["text"] if m["type"] != "ai" or m["calls"] else bool(m["text"])}
        for m in seen["messages"]
    ]
    return {**seen, "messages": messages}


@pytest.mark.parametrize("transport", TRANSPORT_PARAMS)
async def test_tool_calls_show_as_with_the_bare_binding(
    transport: str, browser: Browser, site: str, api: DevServer
) -> None:
    seen = await what_each_hook_shows(browser, site, api.url, transport, "EvoScientist", None)
    bare, recovery = seen["bare"][0], seen["recovery"][0]
    assert [m["type"] for m in bare["messages"]] == ["human", "ai", "tool", "ai"], bare
    assert bare["messages"][1]["calls"] == ["search_notes"], bare
    assert shape(recovery) == shape(bare)


@pytest.mark.parametrize("transport", TRANSPORT_PARAMS)
async def test_an_interrupt_surfaces_as_with_the_bare_binding(
    transport: str, browser: Browser, site: str, api: DevServer
) -> None:
    seen = await what_each_hook_shows(browser, site, api.url, transport, INTERRUPTING, "yes")
    (bare_paused, bare_done), (paused, done) = seen["bare"], seen["recovery"]
    assert bare_paused["interrupt"] == REVIEW, bare_paused
    assert paused["interrupt"] == REVIEW, paused
    assert paused["interrupts"] == bare_paused["interrupts"]
    assert shape(paused) == shape(bare_paused)
    assert bare_done["interrupt"] is None and done["interrupt"] is None, (bare_done, done)
    assert done["messages"][-1]["text"] == "Reviewed: yes. The plan stands.", done
    assert shape(done) == shape(bare_done)


# ---- what a user does mid-run: Stop (mid-answer, and while recovering a cut), a thread
# switch (tests/support/browser_stop.py)


@pytest.mark.parametrize("transport", TRANSPORT_PARAMS)
async def test_a_stop_keeps_what_was_shown_through_the_next_question_and_a_thread_switch(
    transport: str, browser: Browser, site: str, api: DevServer
) -> None:
    url_of = browser_stop.paced(lambda proxy: page_url(site, proxy, "recovery", transport))
    session = await browser_stop.session_on(browser, url_of, api)
    assert not session.failures(), f"{session.failures()}; {session!r}\n{session.timeline}"


@pytest.mark.parametrize("transport", TRANSPORT_PARAMS)
async def test_a_stop_after_a_cut_never_blinks_while_the_thread_is_read_again(
    transport: str, browser: Browser, site: str, api: DevServer
) -> None:
    """From Stop on, no frame shows fewer messages or characters than at Stop, though
    the thread's reads answer 1 s late (tests/support/browser_stop.py)."""
    url_of = browser_stop.paced(lambda proxy: page_url(site, proxy, "recovery", transport))
    stopped = await browser_stop.stop_after_a_cut_on_a_new_thread(browser, url_of, api)
    assert stopped.at_stop and not stopped.blinks(), (
        f"{stopped.blinks()}; {stopped!r}\n{stopped.timeline}"
    )


# ---- useSuspenseStreamWithRecovery: the page's Chat under a Suspense boundary


@pytest.mark.parametrize("transport", TRANSPORT_PARAMS)
async def test_suspense_drop_in_shows_the_route_answer_after_two_cuts(
    transport: str,
    browser: Browser,
    site: str,
    api: DevServer,
    stream_bytes: StreamBytes,
) -> None:
    """Two runs in one page, each cut mid-answer on every event stream; then the thread
    opened in a new page, which suspends until it is hydrated and shows both answers."""
    scenario = SCENARIOS["two runs in one page, both cut"]
    result = await run_scenario(
        browser,
        site,
        api,
        scenario,
        "suspense",
        transport,
        await stream_bytes(transport),
        10,
        LINGER_S,
    )
    assert result is not None
    shown, proxy = result.shown, result.proxy
    context = (
        f"{transport}: proxy {json.dumps(vars(proxy.stats))}; shown {shown!r}\n"
        f"page:\n{result.timeline}"
    )
    assert proxy.stats.fired >= 2, f"the fault did not break both runs; {context}"
    assert len(shown) == 2, context
    for turn, run in enumerate(shown, start=1):
        assert run.exact, f"run {turn}: not the route's answer 1 s after its end; {context}"
        assert run.delay is not None and run.delay <= 1.0, context
        assert not run.doubled, f"run {turn}: a prefix shows twice; {context}"
        assert run.runs == 1, f"run {turn}: {run.runs} runs for one submit; {context}"
        assert '"instances":"true"' in run.page_state, f"plain objects shown; {context}"
    assert shown[0].head in squash(shown[1].body), f"the first turn was lost; {context}"
    assert result.streams_after == 0, f"still reconnecting; {context}"

    page_context = await browser.new_context()
    try:
        page = await page_context.new_page()
        url = page_url(site, api.url, "suspense", transport) + f"&thread={shown[0].thread_id}"
        await open_page(page, url)
        want = [squash(run.expected) for run in shown]
        await page.wait_for_function(
            "want => { const body = document.querySelector('#chat')?.innerText ?? '';"
            " const text = body.split(/\\s+/).filter(Boolean).join(' ');"
            " return want.every(w => text.includes(w)); }",
            arg=want,
            timeout=30_000,
        )
        assert await page.evaluate("() => window.suspended") >= 1, "the thread never suspended"
        assert await page.evaluate("() => window.boundaryErrors") == []
    finally:
        await page_context.close()


async def _streamed_lengths(
    browser: Browser, site: str, api: DevServer, hook: str, transport: str
) -> dict[str, object]:
    """One healthy run: the distinct lengths its answer showed while it streamed (as
    tests/js/test_browser_recovery.py counts them), and whether it ended exact."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await open_page(page, page_url(site, api.url, hook, transport))
        await watch_texts(page)
        await page.evaluate(SUBMIT, question())
        thread_id = await thread_of(page)
        run_id = await nth_run(api.url, thread_id, 1)
        _, expected, message_id = await run_end(api.url, thread_id, run_id)
        await asyncio.sleep(SETTLE_S)
        return {
            "lengths": await distinct_lengths(page, message_id),
            "exact": await page.evaluate(ANSWER_OF, [message_id]) == expected,
            "errors": await page.evaluate("() => window.boundaryErrors"),
        }
    finally:
        await context.close()


@pytest.mark.parametrize("transport", TRANSPORT_PARAMS)
async def test_suspense_drop_in_streams_tokens_as_the_bare_binding(
    transport: str, browser: Browser, site: str, api: DevServer
) -> None:
    bare = await _streamed_lengths(browser, site, api, "suspense-bare", transport)
    hook = await _streamed_lengths(browser, site, api, "suspense", transport)
    context = f"{transport}: useSuspenseStream {bare}; useSuspenseStreamWithRecovery {hook}"
    print(context)
    assert isinstance(bare["lengths"], int) and bare["lengths"] >= 10, context
    assert isinstance(hook["lengths"], int) and hook["lengths"] * 2 >= bare["lengths"], context
    assert hook["exact"] and bare["exact"], context
    assert hook["errors"] == [] and bare["errors"] == [], context


# ---- the measured table (docs/webui-browser-table.md): @langchain/react's columns

TABLE = os.environ.get("EVOSCIENTIST_BROWSER_TABLE")
# column → (hook, transport)
TABLE_HOOKS = {
    "bare (SSE)": ("bare", "sse"),
    "bare (WebSocket)": ("bare", "websocket"),
    "+ recovery (SSE)": ("recovery", "sse"),
    "+ recovery (WebSocket)": ("recovery", "websocket"),
}


@pytest.mark.skipif(not TABLE, reason="EVOSCIENTIST_BROWSER_TABLE not set")
async def test_measure_the_browser_table(
    browser: Browser,
    site: str,
    api: DevServer,
    stream_bytes: StreamBytes,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    assert TABLE is not None
    rows: dict[str, dict[str, str]] = {}
    for name, scenario in SCENARIOS.items():
        rows[name] = {}
        for column, (hook, transport) in TABLE_HOOKS.items():
            if scenario.restart:
                url_of = functools.partial(page_url, site, hook=hook, transport=transport)
                root = tmp_path_factory.mktemp(f"table-restart-{hook}-{transport}")
                rows[name][column] = table.cell([await restart_mid_run(browser, root, url_of)])
                continue
            try:
                outcome = await run_scenario(
                    browser, site, api, scenario, hook, transport, await stream_bytes(transport), 10
                )
            except AssertionError as error:
                # The bare binding may refuse a later submit (its transport gave up).
                turn = re.search(r"never got run #(\d+)", str(error))
                if turn is None:
                    raise
                rows[name][column] = f"run {turn[1]}: the submit made no run"
                continue
            rows[name][column] = (
                table.not_applicable("websocket-commands")
                if outcome is None
                else table.cell(outcome.shown)
            )
    for column, (hook, transport) in TABLE_HOOKS.items():
        paced = browser_stop.paced(lambda proxy, h=hook, t=transport: page_url(site, proxy, h, t))
        for name, value in (await browser_stop.user_rows(browser, paced, api)).items():
            rows.setdefault(name, {})[column] = value
    nested = ("@langchain", "react", "node_modules", "@langchain", "langgraph-sdk")
    sdk = (
        table.package_version(*nested)
        if jstools.NODE_MODULES.joinpath(*nested).exists()
        else table.package_version("@langchain", "langgraph-sdk")
    )
    measured_on = (
        f"@langchain/react {table.package_version('@langchain', 'react')} with its"
        f" @langchain/langgraph-sdk {sdk}, @langchain/core"
        f" {table.package_version('@langchain', 'core')}, {table.environment(browser)}"
    )
    print(table.record(TABLE, table.LANGCHAIN_REACT, measured_on, rows))
    table.assert_recovery_exact(rows, [c for c in TABLE_HOOKS if "recovery" in c])
