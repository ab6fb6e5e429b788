"""`@evoscientist/final-answer/svelte`, proven in a real browser: a Svelte 5 chat page on
@langchain/svelte's `useStream` (bare) or `useStreamWithRecovery` (one import changed),
over SSE and WebSocket, against a real ``langgraph dev`` behind a fault-injecting proxy.
The bare page's figures go to docs/webui-browser-table.md.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.support import browser_stop
from tests.support import browser_table as table
from tests.support.browser_langchain import SCENARIOS, TRANSPORTS, ProtocolProxy
from tests.support.browser_turns import (
    Outcome,
    bare_and_adopted,
    cell,
    healthy_bytes,
    restart_mid_run,
    run_page,
)
from tests.support.servers import DevServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="session")]

PAGE = "svelte.html"
TWO_CUT = "two runs in one page, both cut"
CUT_BEFORE_RESPONSE = "cut before the response"


@pytest.fixture(scope="module")
def site(site: str, pages: Callable[[str | None], Path]) -> str:
    """The shared site (tests/js/conftest.py), checked to hold this module's page."""
    assert (pages(None) / PAGE).exists(), f"{PAGE} was not built"
    return site


def page_of(site: str, hook: str, transport: str) -> Callable[[str], str]:
    return lambda api: f"{site}/{PAGE}?api={api}&hook={hook}&transport={transport}"


StreamBytes = Callable[[str], Awaitable[int]]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stream_bytes(browser: Browser, site: str, api: DevServer) -> StreamBytes:
    """A healthy event stream's size per transport, measured on its first use."""
    sizes: dict[str, int] = {}

    async def of(transport: str) -> int:
        if transport not in sizes:
            url_of = page_of(site, "bare", transport)
            sizes[transport] = await healthy_bytes(browser, api, url_of, ProtocolProxy)
        return sizes[transport]

    return of


async def both(
    browser: Browser, site: str, api: DevServer, name: str, transport: str, total: int
) -> tuple[Outcome, Outcome, str]:
    """The scenario on the bare page and on the adopted one (``bare_and_adopted``); a
    description of both."""
    scenario = SCENARIOS[name]
    fault = scenario.fault(total, transport)
    assert fault is not None
    outcomes = await bare_and_adopted(
        browser,
        api,
        lambda hook: page_of(site, hook, transport),
        fault,
        scenario.turns,
        ProtocolProxy,
    )
    context = "\n".join(
        f"{hook} ({transport}): {cell(o.turns)}; {o.turns!r}; proxy {vars(o.proxy.stats)}"
        for hook, o in zip(("bare", "recovery"), outcomes, strict=True)
    )
    print(context)
    return outcomes[0], outcomes[1], context


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_two_turns_cut_mid_answer_end_on_the_route_answer(
    transport: str, browser: Browser, site: str, api: DevServer, stream_bytes: StreamBytes
) -> None:
    """Every event stream of each of two turns is cut mid-answer: the adopted page shows
    each turn's answer exactly as the route's ``format=text`` gives it, one run per submit,
    its tokens streamed before the cut as the bare page's were."""
    total = await stream_bytes(transport)
    bare, adopted, context = await both(browser, site, api, TWO_CUT, transport, total)
    assert adopted.proxy.stats.fired >= 2, f"the fault did not cut both turns; {context}"
    for i, (turn, control) in enumerate(zip(adopted.turns, bare.turns, strict=True), start=1):
        assert turn.exact, f"turn {i}: not the route's answer; {context}"
        assert turn.delay is not None, f"turn {i}: shown late; {context}"
        assert turn.runs == 1, f"turn {i}: {turn.runs} runs for one submit; {context}"
        # Tool calls show as on the bare page (@langchain/svelte 1.0.29 shows one for the
        # two turns, bare or not).
        assert turn.tool_calls >= max(1, control.tool_calls), f"turn {i}: tools; {context}"
        # Tokens streamed before the cut as the bare page's did. (On the second turn the
        # event stream replays the thread from its start: a cut placed in one turn's
        # bytes lands in that replay, before the new answer, on both pages.)
        assert turn.lengths * 2 >= control.lengths, f"turn {i}: tokens; {context}"
    assert adopted.turns[0].lengths >= 5, f"tokens did not stream; {context}"
    # The control: without the recovery, a turn cut on every stream ends short.
    assert not all(turn.exact for turn in bare.turns), context


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_run_start_cut_before_its_answer_runs_once(
    transport: str, browser: Browser, site: str, api: DevServer, stream_bytes: StreamBytes
) -> None:
    total = await stream_bytes(transport)
    bare, adopted, context = await both(browser, site, api, CUT_BEFORE_RESPONSE, transport, total)
    assert adopted.proxy.stats.fired >= 1 and bare.proxy.stats.fired >= 1, context
    (turn,) = adopted.turns
    assert turn.exact and turn.delay is not None and turn.runs == 1, context
    # The control: over SSE the binding's client re-sends the cut command (two runs);
    # over WebSocket nothing re-sends it, and the page never shows the run.
    (control,) = bare.turns
    assert control.runs == 2 or not control.shown, context


# ---- what a user does mid-run: Stop (mid-answer, and while recovering a cut), a thread
# switch (tests/support/browser_stop.py)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_stop_keeps_what_was_shown_through_the_next_question_and_a_thread_switch(
    transport: str, browser: Browser, site: str, api: DevServer
) -> None:
    url_of = browser_stop.paced(page_of(site, "recovery", transport))
    session = await browser_stop.session_on(browser, url_of, api)
    assert not session.failures(), f"{session.failures()}; {session!r}\n{session.timeline}"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_stop_after_a_cut_never_blinks_while_the_thread_is_read_again(
    transport: str, browser: Browser, site: str, api: DevServer
) -> None:
    """From Stop on, no frame shows fewer messages or characters than at Stop, though
    the thread's reads answer 1 s late (tests/support/browser_stop.py)."""
    url_of = browser_stop.paced(page_of(site, "recovery", transport))
    stopped = await browser_stop.stop_after_a_cut_on_a_new_thread(browser, url_of, api)
    assert stopped.at_stop and not stopped.blinks(), (
        f"{stopped.blinks()}; {stopped!r}\n{stopped.timeline}"
    )


# ---- the measured table (docs/webui-browser-table.md): @langchain/svelte's columns

TABLE = os.environ.get("EVOSCIENTIST_BROWSER_TABLE")
RESTART = "server restarted mid-run"
# column → (hook, transport)
COLUMNS = {
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
    rows: dict[str, dict[str, str]] = {name: {} for name in table.ROWS}
    for column, (hook, transport) in COLUMNS.items():
        url_of = page_of(site, hook, transport)
        for name, scenario in SCENARIOS.items():
            if scenario.restart:
                root = tmp_path_factory.mktemp("svelte-restart")
                rows[name][column] = cell([await restart_mid_run(browser, root, url_of)])
                continue
            fault = scenario.fault(await stream_bytes(transport), transport)
            if fault is None:
                rows[name][column] = table.not_applicable("websocket-commands")
                continue
            outcome = await run_page(
                browser,
                api,
                url_of,
                fault,
                scenario.turns,
                ProtocolProxy,
                reload_after_s=scenario.reload_after_s,
            )
            rows[name][column] = cell(outcome.turns)
        paced = browser_stop.paced(url_of)
        for name, value in (await browser_stop.user_rows(browser, paced, api)).items():
            rows[name][column] = value
    nested = ("@langchain", "svelte", "node_modules", "@langchain", "langgraph-sdk")
    measured_on = (
        f"@langchain/svelte {table.package_version('@langchain', 'svelte')} with its"
        f" @langchain/langgraph-sdk {table.package_version(*nested)},"
        f" svelte {table.package_version('svelte')},"
        f" @langchain/core {table.package_version('@langchain', 'core')},"
        f" {table.environment(browser)}"
    )
    print(table.record(TABLE, table.SVELTE, measured_on, rows))
    table.assert_recovery_exact(rows, [c for c in COLUMNS if "recovery" in c])
