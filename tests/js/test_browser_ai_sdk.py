"""`@evoscientist/final-answer/ai-sdk` in headless Chromium: `useChat({ resume: true })` on
`LangGraphChatTransport` (tests/js/browser/ai-sdk.jsx) against a real ``langgraph dev``
through a fault proxy, bare `LangSmithDeploymentTransport` as the control: cuts, reloads
(the whole turn resumed), a new chat without a console error, Stop, a chat left mid-run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.support import browser_stop
from tests.support import browser_table as table
from tests.support.browser_ai_sdk import (
    bare_stop,
    bare_turns,
    new_chat,
    reload_after_stop,
    reload_while_recovering,
)
from tests.support.browser_turns import (
    FAULT_ROWS,
    Outcome,
    cell,
    every_stream_cut,
    healthy_bytes,
    restart_mid_run,
    run_page,
)
from tests.support.servers import DevServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="session")]

PAGE = "ai-sdk.html"


@pytest.fixture(scope="module")
def site(site: str, pages: Callable[[str | None], Path]) -> str:
    """The shared site (tests/js/conftest.py), checked to hold this module's page."""
    assert (pages(None) / PAGE).exists(), f"{PAGE} was not built"
    return site


def page_of(site: str, hook: str) -> Callable[[str], str]:
    return lambda api: f"{site}/{PAGE}?api={api}&hook={hook}"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stream_bytes(browser: Browser, site: str, api: DevServer) -> int:
    return await healthy_bytes(browser, api, page_of(site, "recovery"))


def describe(name: str, outcome: Outcome) -> str:
    return f"{name}: {cell(outcome.turns)}; {outcome.turns!r}; proxy {vars(outcome.proxy.stats)}"


async def test_two_turns_cut_mid_answer_end_on_the_route_answer(
    browser: Browser, site: str, api: DevServer, stream_bytes: int
) -> None:
    fault = every_stream_cut(stream_bytes)
    adopted = await run_page(browser, api, page_of(site, "recovery"), fault, 2)
    (bare,) = await bare_turns(browser, api, page_of(site, "bare"), fault, 1)
    context = f"{describe('adopted', adopted)}\nbare: {bare.verdict()}; {bare!r}"
    print(context)
    assert adopted.proxy.stats.fired >= 2, f"the fault did not cut both turns; {context}"
    for i, turn in enumerate(adopted.turns, start=1):
        assert turn.exact, f"turn {i}: not the route's answer; {context}"
        assert turn.delay is not None, f"turn {i}: shown late; {context}"
        assert turn.runs == 1, f"turn {i}: {turn.runs} runs for one submit; {context}"
        assert turn.tool_calls >= i, f"turn {i}: its tool call not shown; {context}"
        assert turn.lengths >= 5, f"turn {i}: its tokens not streamed before the cut; {context}"
    # The control: the bare transport's cut turn ends short of its answer, in an error.
    assert bare.turn.shown != bare.turn.expected and bare.error, context


async def test_a_reload_mid_run_resumes_the_whole_turn_once_in_its_message(
    browser: Browser, site: str, api: DevServer
) -> None:
    """The answer streams, its stream is cut (and every rejoin), and the page is reloaded
    while it recovers: `resume: true` shows the whole turn the page had (its tool call
    and result, its reasoning, in that order) and the run's exact answer once, in the
    turn's own message, with one run."""
    adopted, proxy = await reload_while_recovering(browser, api, page_of(site, "recovery"))
    bare, _ = await reload_while_recovering(browser, api, page_of(site, "bare"))
    report = f"adopted: {adopted!r}; proxy {vars(proxy.stats)}\nbare: {bare.verdict()}; {bare!r}"
    print(report)
    assert proxy.stats.fired >= 1, report
    assert adopted.turn.exact and adopted.turn.delay is not None, report
    assert adopted.turn.runs == 1, report
    # One question, one answer: the resumed turn replaced the message the page kept (the
    # one its run named), never a second copy beside it.
    assert [kind for kind, _ in adopted.messages] == ["msg msg-user", "msg msg-assistant"], report
    assert adopted.messages[1][1] == adopted.turn.run_id, report
    # The whole turn: what the message showed before the reload, it shows after it.
    kinds = [part[0] for part in adopted.parts_before]
    assert {"tool", "reasoning", "text"} <= set(kinds), f"not a whole turn at the reload; {report}"
    assert not adopted.lost(), f"{adopted.lost()}; {report}"
    # The control: the bare transport cannot resume ("Method not implemented").
    assert bare.turn.shown != bare.turn.expected and bare.error, report


async def test_a_new_chat_makes_no_failing_request_and_logs_no_error(
    browser: Browser, site: str, api: DevServer
) -> None:
    """A new chat's resume check on mount (`resume: true`) finds nothing to resume without
    a request that fails (the thread does not exist yet): the browser's console stays
    clean while the chat opens and through its first turn."""
    chat = await new_chat(browser, api, page_of(site, "recovery"))
    report = f"{chat!r}"
    print(report)
    assert not chat.failures(), f"{chat.failures()}; {report}"
    assert chat.answer == chat.expected, report


# ---- what a user does mid-run: Stop (mid-answer, and while recovering a cut), a chat
# left mid-run (tests/support/browser_stop.py)


async def test_a_stop_keeps_what_was_shown_through_the_next_question_and_a_chat_switch(
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


async def test_a_reload_after_a_stop_keeps_what_was_shown(
    browser: Browser, site: str, api: DevServer
) -> None:
    """Stop mid-answer, then reload: the resume check on mount finds a cancelled run and
    leaves the stopped turn as the page kept it (its tool call, reasoning and text), with
    no error."""
    stopped = await reload_after_stop(browser, api, page_of(site, "recovery"))
    report = f"{stopped!r}"
    print(report)
    assert stopped.status == "interrupted", report  # cancelled on the server
    assert [part[0] for part in stopped.at_stop] == ["tool", "reasoning", "text"], report
    assert stopped.reloaded == stopped.at_stop, report
    assert not stopped.error, report


# ---- the measured table (docs/webui-browser-table.md): the AI SDK's columns

TABLE = os.environ.get("EVOSCIENTIST_BROWSER_TABLE")


RELOAD = "cut, then reload: the rejoin cut too"


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
    bare, adopted = "bare (LangSmithDeploymentTransport)", "LangGraphChatTransport"
    for name, row in FAULT_ROWS.items():
        fault = row.fault(stream_bytes)
        shown = await bare_turns(browser, api, page_of(site, "bare"), fault, row.turns)
        rows[name][bare] = cell(shown)
        outcome = await run_page(browser, api, page_of(site, "recovery"), fault, row.turns)
        rows[name][adopted] = cell(outcome.turns)
    for column, hook in ((bare, "bare"), (adopted, "recovery")):
        reloaded, _ = await reload_while_recovering(browser, api, page_of(site, hook))
        rows[RELOAD][column] = reloaded.verdict()
    # The bare transport's runs are threadless: no thread to follow across a restart, nor
    # to show again; the adopted page through both, as every other page is.
    root = tmp_path_factory.mktemp("ai-sdk-restart")
    restarted = await restart_mid_run(browser, root, page_of(site, "recovery"))
    rows["server restarted mid-run"][adopted] = cell([restarted])
    rows["server restarted mid-run"][bare] = table.not_applicable("threadless")
    rows[browser_stop.SWITCH][bare] = table.not_applicable("threadless")
    for name, after_cut_s in browser_stop.STOP_ROWS.items():
        paced = page_of(site, "bare")
        rows[name][bare] = (await bare_stop(browser, api, paced, after_cut_s)).verdict()
    paced = browser_stop.paced(page_of(site, "recovery"))
    for name, value in (await browser_stop.user_rows(browser, paced, api)).items():
        rows[name][adopted] = value
    measured_on = (
        f"@ai-sdk/react {table.package_version('@ai-sdk', 'react')} (`useChat`, `resume: true`),"
        f" ai {table.package_version('ai')},"
        f" @ai-sdk/langchain {table.package_version('@ai-sdk', 'langchain')}"
        f" with @langchain/langgraph {table.package_version('@langchain', 'langgraph')},"
        f" {table.environment(browser)}"
    )
    print(table.record(TABLE, table.AI_SDK, measured_on, rows))
    table.assert_recovery_exact(rows, [adopted])
