"""Chat pages that show turns rather than message ids (assistant-ui's Thread, the Svelte
page: tests/js/browser/answers.js reads each turn's answer off the rendered thread), in a
real browser, cross-origin from a real ``langgraph dev`` behind the fault proxy.

A page asks its questions one after the other; each turn is followed to its run's end on
the server directly (not through the proxy), and what the page shows for it is read then
and up to a bound after. Shared by tests/js/test_browser_assistant_ui.py,
tests/js/test_browser_svelte.py and their columns of docs/webui-browser-table.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from playwright.async_api import Browser, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.support import jstools
from tests.support.browser_langchain import around_a_restart, question
from tests.support.browser_page import (
    SHOW_WITHIN_S,
    SUBMIT,
    nth_run,
    run_end,
    run_status,
    runs_of,
    thread_of,
)
from tests.support.local_http import local_client
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer

# A page's patience, each of three bounds: how long past a run's end it may take to
# show its answer before it counts as never shown; how long it may still be loading
# after its last run ended before it counts as stuck (a bare page after some cuts, for
# good), its next submit tried anyway; and how long a submit may go without making a
# run before it made none (a stuck bare page's). Generous for the adopted pages and the
# table (the Chromium pages share two cores with other tests; the table's verdict is
# still about the first second, ``SHOW_WITHIN_S``).
PATIENCE_S = 10.0
# The tests' bare pages, the controls, wait less: 4× the 1 s bar is enough to call one
# short, and a stuck bare page otherwise waits out 30 s per two turns.
CONTROL_PATIENCE_S = 4.0
ANSWERS = "() => window.answers()"


@dataclass
class Turn:
    """What the page showed for one question."""

    expected: str  # the route's ``format=text`` answer
    shown: str | None  # the turn's answer on the page, the patience at most after the run's end
    delay: float | None  # run end → exact answer on the page; None: never within the patience
    lengths: int  # distinct answer lengths the page showed before the run's end
    runs: int  # runs this submit made
    thread_id: str
    run_id: str
    status: str = "success"  # the run's, as the server ended it
    tool_calls: int = 0  # tool calls the page showed, all turns so far

    @property
    def exact(self) -> bool:
        return self.status == "success" and self.shown == self.expected

    def verdict(self) -> str:
        """One cell of the measured table, as ``Shown.verdict`` words it."""
        if self.runs == 0:
            return "the submit made no run"
        if self.status != "success":
            # `onDisconnect: "cancel"`: the dropped connection cancelled the run.
            verdict = f"no answer: the run ended {self.status}"
        elif self.exact and self.delay is not None and self.delay <= SHOW_WITHIN_S:
            verdict = "exact"
        elif self.exact:
            verdict = f"exact {self.delay:.1f} s after the run's end"
        elif not self.shown:
            verdict = "no answer shown"
        elif len(self.shown) > len(self.expected):
            verdict = f"doubled: {len(self.shown)}/{len(self.expected)} chars"
        else:
            verdict = f"truncated: {len(self.shown)}/{len(self.expected)} chars"
        if self.runs > 1:
            verdict += f" ({self.runs} runs: the submit was re-sent)"
        return verdict


class HasVerdict(Protocol):
    def verdict(self) -> str: ...


def cell(turns: Sequence[HasVerdict]) -> str:
    if len(turns) == 1:
        return turns[0].verdict()
    return "; ".join(f"run {i}: {turn.verdict()}" for i, turn in enumerate(turns, start=1))


async def open_page(page: Page, url: str) -> None:
    if page.url != url:
        await page.goto(url)
    await page.wait_for_function("() => window.chat !== undefined && window.answers !== undefined")


async def _distinct_lengths(page: Page, turn: int) -> int:
    texts = await page.evaluate("t => window.shownAnswers[t] ?? []", turn)
    return len({len(text) for text in texts if text})


async def shown_within(
    page: Page, turn: int, expected: str, ended: float, patience_s: float
) -> tuple[str | None, float | None]:
    try:
        await page.wait_for_function(
            "([t, want]) => window.answers()[t] === want",
            arg=[turn, expected],
            timeout=max(0.0, ended + patience_s - time.monotonic()) * 1000,
            polling=20,
        )
        delay: float | None = time.monotonic() - ended
    except PlaywrightTimeout:
        delay = None
    answers = await page.evaluate(ANSWERS)
    return (answers[turn] if turn < len(answers) else None), delay


async def ask(
    page: Page,
    api: str,
    turns: int,
    patience_s: float = PATIENCE_S,
    reload_after_s: float | None = None,
) -> list[Turn]:
    """Ask ``turns`` questions, each once the page is idle again; what each turn showed.
    ``reload_after_s``: the page is reloaded that long after each run exists (it shows
    the thread again from its URL)."""
    shown: list[Turn] = []
    for turn in range(turns):
        runs_before = sum(t.runs for t in shown)
        # A bare page can stay loading after a cut: its submit is tried anyway.
        with contextlib.suppress(PlaywrightTimeout):
            await page.wait_for_function("() => !window.chat.loading()", timeout=patience_s * 1000)
        await page.evaluate(SUBMIT, question())
        thread_id = await thread_of(page)
        try:
            run_id = await nth_run(api, thread_id, runs_before + 1, patience_s)
        except AssertionError:
            shown.append(Turn("", None, None, 0, 0, thread_id, "", "not made"))
            continue
        if reload_after_s is not None:
            await asyncio.sleep(reload_after_s)
            await page.reload()
            await open_page(page, page.url)
        ended, expected, _ = await run_end(api, thread_id, run_id)
        # A re-sent submit makes another run of the same input: follow the newest.
        while (runs := await runs_of(api, thread_id))[-1] != run_id:
            run_id = runs[-1]
            ended, expected, _ = await run_end(api, thread_id, run_id)
        lengths = await _distinct_lengths(page, turn)
        answer, delay = await shown_within(page, turn, expected, ended, patience_s)
        runs = len(await runs_of(api, thread_id)) - runs_before
        status = await run_status(api, thread_id, run_id)
        if answer == expected and await thread_tool_calls(api, thread_id):
            # The route's answer shows at the run's end; the tool calls a cut stream
            # missed show once the page has rebound its binding to the thread's state,
            # a moment later (more under load): count them once one shows.
            with contextlib.suppress(PlaywrightTimeout):
                await page.wait_for_function(
                    "() => document.querySelectorAll('.part-tool').length >= 1",
                    timeout=patience_s * 1000,
                    polling=20,
                )
        tools = await page.locator(".part-tool").count()
        shown.append(Turn(expected, answer, delay, lengths, runs, thread_id, run_id, status, tools))
    return shown


async def thread_tool_calls(api: str, thread_id: str) -> int:
    """Tool calls the thread's messages hold, all turns so far."""
    async with local_client(api, timeout=10) as http:
        response = await http.get(f"/threads/{thread_id}/state")
        response.raise_for_status()
    messages = (response.json().get("values") or {}).get("messages") or []
    return sum(len(m.get("tool_calls") or []) for m in messages if isinstance(m, dict))


# The table's fault rows for a turn page (docs/webui-browser-table.md), by a healthy
# run stream's size in bytes: the submit's stream cut, reset or stalled at ``MID`` of it.
MID = 0.7  # of a healthy run stream's bytes: inside the answer's tokens
RUN_POST = ("/runs/stream",)  # the submit: POST [/threads/{id}]/runs/stream


def every_stream_cut(total: int) -> Fault:
    # The submit's stream and every rejoin of the run (the proxy's default match).
    return Fault("cut", int(MID * total), times=None)


@dataclass(frozen=True)
class Row:
    fault: Callable[[int], Fault]  # from a healthy stream's size
    turns: int = 1
    reload_after_s: float | None = None  # the page reloaded that long into the run


FAULT_ROWS: dict[str, Row] = {
    "no fault": Row(lambda total: Fault()),
    "cut before the response": Row(lambda total: Fault("cut", 0, match=RUN_POST)),
    "cut before the request reaches the server; it arrives 0.5 s later": Row(
        lambda total: Fault("late", match=RUN_POST, delay=0.5)
    ),
    "cut mid-answer": Row(lambda total: Fault("cut", int(MID * total), match=RUN_POST)),
    "reset (RST) mid-answer": Row(lambda total: Fault("reset", int(MID * total), match=RUN_POST)),
    "stall mid-answer": Row(lambda total: Fault("stall", int(MID * total), match=RUN_POST)),
    "cut mid-answer, every reconnect cut": Row(every_stream_cut),
    "two runs in one page, both cut": Row(every_stream_cut, turns=2),
}


@dataclass
class Outcome:
    turns: list[Turn]
    proxy: FaultProxy


async def run_page(
    browser: Browser,
    api: DevServer,
    url_of: Callable[[str], str],
    fault: Fault,
    turns: int,
    proxy_class: type[FaultProxy] = jstools.OneRequestProxy,
    patience_s: float = PATIENCE_S,
    reload_after_s: float | None = None,
) -> Outcome:
    """The page at ``url_of(proxy_url)`` through a proxy with ``fault``, asked ``turns``
    questions (``ask``)."""
    context = await browser.new_context()
    proxy = await proxy_class(api.port, fault).start()
    try:
        page = await context.new_page()
        await open_page(page, url_of(proxy.url))
        return Outcome(await ask(page, api.url, turns, patience_s, reload_after_s), proxy)
    finally:
        await context.close()
        await proxy.stop()


async def bare_and_adopted(
    browser: Browser,
    api: DevServer,
    page_of: Callable[[str], Callable[[str], str]],
    fault: Fault,
    turns: int,
    proxy_class: type[FaultProxy] = jstools.OneRequestProxy,
) -> tuple[Outcome, Outcome]:
    """The bare page (``page_of("bare")``, the control, with ``CONTROL_PATIENCE_S``) and
    the adopted one (``page_of("recovery")``), each through its own proxy with ``fault``,
    side by side: a bare page stuck after its cuts waits out its bounds meanwhile."""
    bare, adopted = await asyncio.gather(
        run_page(browser, api, page_of("bare"), fault, turns, proxy_class, CONTROL_PATIENCE_S),
        run_page(browser, api, page_of("recovery"), fault, turns, proxy_class),
    )
    return bare, adopted


async def healthy_bytes(
    browser: Browser,
    api: DevServer,
    url_of: Callable[[str], str],
    proxy_class: type[FaultProxy] = jstools.OneRequestProxy,
) -> int:
    """The longest response of one healthy turn, in bytes: where faults are placed."""
    outcome = await run_page(browser, api, url_of, Fault(), 1, proxy_class)
    assert outcome.turns[0].exact, outcome.turns
    await asyncio.sleep(0)
    return max(outcome.proxy.stats.downstream_bytes)


async def restart_mid_run(browser: Browser, root: Path, url_of: Callable[[str], str]) -> Turn:
    """One question on the page at ``url_of(api)``; once its answer streams the server is
    killed and started again (``around_a_restart``): what its turn shows then."""

    async def read(page: Page, api: str, thread_id: str, run_id: str) -> Turn:
        ended, expected, _ = await run_end(api, thread_id, run_id)
        answer, delay = await shown_within(page, 0, expected, ended, PATIENCE_S)
        # A SIGKILL may lose the thread's run records (langgraph dev keeps them in
        # memory); the checkpoints the route reads stay, and so does its verdict.
        runs = max(1, len(await runs_of(api, thread_id)))
        return Turn(expected, answer, delay, 0, runs, thread_id, run_id)

    return await around_a_restart(browser, root, url_of, read)
