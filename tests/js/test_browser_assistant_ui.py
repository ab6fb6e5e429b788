"""`@evoscientist/final-answer/assistant-ui`, proven in a real browser: assistant-ui's
Thread on `useLangGraphRuntime`, its `stream` from `unstable_createLangGraphStream`
(bare) or `createLangGraphStreamWithRecovery` (one call changed), against a real
``langgraph dev`` behind a fault-injecting proxy. The bare page's figures go to
docs/webui-browser-table.md.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.support import browser_stop
from tests.support import browser_table as table
from tests.support.browser_turns import (
    FAULT_ROWS,
    RUN_POST,
    Outcome,
    Row,
    bare_and_adopted,
    cell,
    every_stream_cut,
    healthy_bytes,
    restart_mid_run,
    run_page,
)
from tests.support.proxy import Fault
from tests.support.servers import DevServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="session")]

PAGE = "assistant-ui.html"


@pytest.fixture(scope="module")
def site(site: str, pages: Callable[[str | None], Path]) -> str:
    """The shared site (tests/js/conftest.py), checked to hold this module's page."""
    assert (pages(None) / PAGE).exists(), f"{PAGE} was not built"
    return site


def page_of(site: str, hook: str) -> Callable[[str], str]:
    return lambda api: f"{site}/{PAGE}?api={api}&hook={hook}"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stream_bytes(browser: Browser, site: str, api: DevServer) -> int:
    return await healthy_bytes(browser, api, page_of(site, "bare"))


def describe(name: str, outcome: Outcome) -> str:
    return f"{name}: {cell(outcome.turns)}; {outcome.turns!r}; proxy {vars(outcome.proxy.stats)}"


async def test_two_turns_cut_mid_answer_end_on_the_route_answer(
    browser: Browser, site: str, api: DevServer, stream_bytes: int
) -> None:
    """Every stream connection of each of two turns is cut mid-answer: the adopted page shows
    each turn's answer exactly as the route's ``format=text`` gives it, one run per submit,
    its tokens streamed before the cut as the bare page's were."""
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


# ---- what a user does mid-run: Stop (mid-answer, and while recovering a cut), a thread
# switch (tests/support/browser_stop.py)


async def test_a_stop_keeps_what_was_shown_through_the_next_question_and_a_thread_switch(
    browser: Browser, site: str, api: DevServer
) -> None:
    url_of = browser_stop.paced(page_of(site, "recovery"))
    session = await browser_stop.session_on(browser, url_of, api)
    assert not session.failures(), f"{session.failures()}; {session!r}\n{session.timeline}"


async def test_a_stop_after_a_cut_never_blinks_while_the_thread_is_read_again(
    browser: Browser, site: str, api: DevServer
) -> None:
    """From Stop on, no frame shows fewer messages or characters than at Stop, though
    the thread's reads answer 1 s late (tests/support/browser_stop.py)."""
    url_of = browser_stop.paced(page_of(site, "recovery"))
    stopped = await browser_stop.stop_after_a_cut_on_a_new_thread(browser, url_of, api)
    assert stopped.at_stop and not stopped.blinks(), (
        f"{stopped.blinks()}; {stopped!r}\n{stopped.timeline}"
    )


async def test_a_stop_between_an_event_and_its_frame_keeps_that_frame(
    browser: Browser, site: str, api: DevServer
) -> None:
    """Stop in the task that took a messages event, before React drew it: the click's DOM
    is one event behind the runtime, whose next frame draws that event. That frame is
    what the page held at Stop, and the turn keeps it through the next question."""
    url_of = browser_stop.paced(page_of(site, "recovery"))
    stopped = await browser_stop.stop_between_an_event_and_its_frame(browser, url_of, api)
    assert stopped.at_click is not None and len(stopped.at_stop) > len(stopped.at_click), (
        f"the click did not fall between an event and its frame; {stopped!r}"
    )
    assert stopped.at_stop.startswith(stopped.at_click), stopped
    assert stopped.kept and stopped.cancelled and not stopped.blinks(), (
        f"{stopped.verdict()}; {stopped.blinks()}; {stopped!r}"
    )


# ---- the measured table (docs/webui-browser-table.md): assistant-ui's columns

TABLE = os.environ.get("EVOSCIENTIST_BROWSER_TABLE")


ROWS: dict[str, Row] = {
    **FAULT_ROWS,
    "cut, then reload: the rejoin cut too": Row(
        lambda total: Fault("cut", int(0.3 * total), times=None), reload_after_s=0.5
    ),
}
RESTART = "server restarted mid-run"
COLUMNS = {"bare": "bare", "+ recovery": "recovery"}


@pytest.mark.skipif(not TABLE, reason="EVOSCIENTIST_BROWSER_TABLE not set")
async def test_measure_the_browser_table(
    browser: Browser,
    site: str,
    api: DevServer,
    stream_bytes: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    assert TABLE is not None
    rows: dict[str, dict[str, str]] = {name: {} for name in table.ROWS}
    for column, hook in COLUMNS.items():
        for name, row in ROWS.items():
            outcome = await run_page(
                browser,
                api,
                page_of(site, hook),
                row.fault(stream_bytes),
                row.turns,
                reload_after_s=row.reload_after_s,
            )
            rows[name][column] = cell(outcome.turns)
        root = tmp_path_factory.mktemp("aui-restart")
        rows[RESTART][column] = cell([await restart_mid_run(browser, root, page_of(site, hook))])
        paced = browser_stop.paced(page_of(site, hook))
        for name, value in (await browser_stop.user_rows(browser, paced, api)).items():
            rows[name][column] = value
    measured_on = (
        "@assistant-ui/react-langgraph"
        f" {table.package_version('@assistant-ui', 'react-langgraph')},"
        f" @assistant-ui/react {table.package_version('@assistant-ui', 'react')},"
        f" @langchain/langgraph-sdk {table.package_version('@langchain', 'langgraph-sdk')},"
        f" {table.environment(browser)}"
    )
    print(table.record(TABLE, table.ASSISTANT_UI, measured_on, rows))
    table.assert_recovery_exact(rows, ["+ recovery"])
