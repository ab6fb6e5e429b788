"""`@evoscientist/final-answer/assistant-ui`, proven in a real browser: assistant-ui's
Thread on `useLangGraphRuntime`, its `stream` built by `unstable_createLangGraphStream`
(bare) or, one call changed, by `createLangGraphStreamWithRecovery`, served from another
origin than a real ``langgraph dev`` and loaded in headless Debian chromium; a
fault-injecting proxy cuts the page's run streams.

Each page asks two questions and every stream connection of each turn is cut
mid-answer: the adopted page shows each turn's answer exactly as the route's
``format=text`` gives it, one run per submit, its tokens streamed before the cut as the
bare page's were. A POST cut before its response runs once. The bare page's figures are
printed and go to the table (docs/webui-browser-table.md).
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.support import browser_table as table
from tests.support import jstools
from tests.support.browser_langchain import server
from tests.support.browser_page import build_page, headless_chromium, static_site
from tests.support.browser_turns import Outcome, bare_and_adopted, cell, healthy_bytes, run_page
from tests.support.proxy import Fault
from tests.support.servers import DevServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

PAGE = "assistant-ui.html"
MID = 0.7  # of a healthy run stream's bytes: inside the answer's tokens
RUN_POST = ("/runs/stream",)  # the submit: POST /threads/{id}/runs/stream


@pytest.fixture(scope="module")
def node() -> str:
    return jstools.node()


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, node: str) -> Iterator[DevServer]:
    jstools.chromium()
    with server(tmp_path_factory.mktemp("aui-browser")) as dev:
        yield dev


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, node: str) -> Iterator[str]:
    page = build_page(node, tmp_path_factory.mktemp("aui-page"))
    assert (page / PAGE).exists(), "the assistant-ui page was not built"
    with static_site(page) as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(node: str) -> AsyncIterator[Browser]:
    async with headless_chromium() as browser:
        yield browser


def page_of(site: str, hook: str) -> Callable[[str], str]:
    return lambda api: f"{site}/{PAGE}?api={api}&hook={hook}"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stream_bytes(browser: Browser, site: str, api: DevServer) -> int:
    return await healthy_bytes(browser, api, page_of(site, "bare"))


def every_stream_cut(total: int) -> Fault:
    # The submit's stream and every rejoin of the run (the proxy's default match).
    return Fault("cut", int(MID * total), times=None)


def describe(name: str, outcome: Outcome) -> str:
    return f"{name}: {cell(outcome.turns)}; {outcome.turns!r}; proxy {vars(outcome.proxy.stats)}"


async def test_two_turns_cut_mid_answer_end_on_the_route_answer(
    browser: Browser, site: str, api: DevServer, stream_bytes: int
) -> None:
    fault = every_stream_cut(stream_bytes)
    bare, adopted = await bare_and_adopted(browser, api, functools.partial(page_of, site), fault, 2)
    context = f"{describe('bare', bare)}\n{describe('adopted', adopted)}"
    print(context)
    assert adopted.proxy.stats.fired >= 2, f"the fault did not cut both turns; {context}"
    for i, (turn, control) in enumerate(zip(adopted.turns, bare.turns, strict=True), start=1):
        assert turn.exact, f"turn {i}: not the route's answer; {context}"
        assert turn.delay is not None, f"turn {i}: shown late; {context}"
        assert turn.runs == 1, f"turn {i}: {turn.runs} runs for one submit; {context}"
        assert turn.tool_calls >= i, f"turn {i}: its tool call not shown; {context}"
        # Tokens streamed before the cut, as they did without the recovery.
        assert turn.lengths >= 5 and turn.lengths * 2 >= control.lengths, context
    # The control: without the recovery, a cut turn ends on a truncated answer.
    assert not all(turn.exact for turn in bare.turns), context


async def test_a_submit_cut_before_its_response_runs_once(
    browser: Browser, site: str, api: DevServer, stream_bytes: int
) -> None:
    fault = Fault("cut", 0, match=RUN_POST)
    bare, adopted = await bare_and_adopted(browser, api, functools.partial(page_of, site), fault, 1)
    context = f"{describe('bare', bare)}\n{describe('adopted', adopted)}"
    print(context)
    assert adopted.proxy.stats.fired == 1 and bare.proxy.stats.fired == 1, context
    (turn,) = adopted.turns
    assert turn.exact and turn.runs == 1, context
    # The control: `onDisconnect: "cancel"`, and the cut is a disconnect: the server
    # cancels the run, and the page shows no answer; or, where the cut POST is re-sent
    # (a request that failed before any response, which the SDK's fetch retry or the
    # browser may send again, by timing), the run is cancelled and a second one made.
    (control,) = bare.turns
    cancelled = control.status != "success" and not control.shown
    assert cancelled or control.runs == 2, context


# ---- the measured table (docs/webui-browser-table.md): assistant-ui's columns

TABLE = os.environ.get("EVOSCIENTIST_BROWSER_TABLE")
# row → (fault from a healthy stream's size, questions asked)
ROWS: dict[str, tuple[Callable[[int], Fault], int]] = {
    "no fault": (lambda total: Fault(), 1),
    "cut before the response": (lambda total: Fault("cut", 0, match=RUN_POST), 1),
    "cut mid-answer": (lambda total: Fault("cut", int(MID * total), match=RUN_POST), 1),
    "cut mid-answer, every reconnect cut": (every_stream_cut, 1),
    "two runs in one page, both cut": (every_stream_cut, 2),
}
COLUMNS = {"bare": "bare", "+ recovery": "recovery"}


@pytest.mark.skipif(not TABLE, reason="EVOSCIENTIST_BROWSER_TABLE not set")
async def test_measure_the_browser_table(
    browser: Browser, site: str, api: DevServer, stream_bytes: int
) -> None:
    assert TABLE is not None
    rows: dict[str, dict[str, str]] = {}
    for name, (fault_of, turns) in ROWS.items():
        rows[name] = {}
        for column, hook in COLUMNS.items():
            outcome = await run_page(
                browser, api, page_of(site, hook), fault_of(stream_bytes), turns
            )
            rows[name][column] = cell(outcome.turns)
    measured_on = (
        "@assistant-ui/react-langgraph"
        f" {table.package_version('@assistant-ui', 'react-langgraph')},"
        f" @assistant-ui/react {table.package_version('@assistant-ui', 'react')},"
        f" @langchain/langgraph-sdk {table.package_version('@langchain', 'langgraph-sdk')},"
        f" {table.environment(browser)}"
    )
    print(table.record(TABLE, table.ASSISTANT_UI, measured_on, rows))
    table.assert_recovery_exact(rows, ["+ recovery"])
