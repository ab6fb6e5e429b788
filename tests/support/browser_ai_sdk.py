"""The AI SDK's `useChat` page (tests/js/browser/ai-sdk.jsx) in a real browser, where the
other turn pages' measures (tests/support/browser_turns.py, browser_stop.py) cannot
reach: a reload mid-run with `resume: true`, and the bare transport's turns.

@ai-sdk/langchain's `LangSmithDeploymentTransport` starts threadless runs (``POST
/runs/stream``): the server runs each on a temporary thread it deletes at the run's end,
so there is no thread for the route to answer from. A bare turn is compared with a
healthy run of the same question on a thread of its own (the offline agent answers a
question the same way each time), and its run is found among the server's busy threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
from playwright.async_api import Browser, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.support import jstools
from tests.support.browser_langchain import question
from tests.support.browser_page import SHOW_WITHIN_S, SUBMIT, run_end, runs_of
from tests.support.browser_stop import ANSWER_CHARS_AT_STOP, CANCEL_WITHIN_S, Stopped
from tests.support.browser_stop import question as paced_question
from tests.support.browser_turns import (
    ANSWERS,
    CONTROL_PATIENCE_S,
    PATIENCE_S,
    Turn,
    open_page,
    shown_within,
)
from tests.support.local_http import local_client
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer
from tests.support.slow_agent_graph import SLOW, SLOW_GRAPH, SLOWER

# How long a bare page may stay loading before its turn is read anyway.
BARE_PATIENCE_S = 3 * CONTROL_PATIENCE_S
PAGE_MESSAGES = (
    "() => [...document.querySelectorAll('.msg')].map((m) => [m.className, m.dataset.id])"
)
STOP = "() => { const shown = window.answers()[0] ?? ''; window.chat.stop(); return shown; }"
PAGE_ERROR = "() => document.querySelector('#chat')?.dataset.error ?? ''"


async def healthy_answer(api: str, ask: str, assistant: str = "EvoScientist") -> str:
    """The route's answer to ``ask`` on a thread of its own, asked directly (no proxy):
    what a bare turn of the same question should show."""
    async with local_client(api, timeout=120) as http:
        thread = (await http.post("/threads", json={})).json()["thread_id"]
        human = {"role": "human", "content": ask}
        run = await http.post(
            f"/threads/{thread}/runs/wait",
            json={"assistant_id": assistant, "input": {"messages": [human]}},
        )
        run.raise_for_status()
        text = await http.get(f"/api/threads/{thread}/final-answer", params={"format": "text"})
        text.raise_for_status()
        return text.text


async def idle(page: Page, within_s: float) -> float | None:
    """Seconds until the page is no longer loading; None past ``within_s``."""
    began = time.monotonic()
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_function(
            "() => window.chat?.loading && !window.chat.loading()",
            timeout=within_s * 1000,
            polling=20,
        )
        return time.monotonic() - began
    return None


@dataclass
class BareTurn:
    turn: Turn
    error: str  # what the page says went wrong, if anything

    def verdict(self) -> str:
        verdict = "exact" if self.turn.shown == self.turn.expected else self.turn.verdict()
        return f"{verdict}; the page's error: {self.error}" if self.error else verdict


async def bare_turns(
    browser: Browser, api: DevServer, url_of: Callable[[str], str], fault: Fault, turns: int
) -> list[BareTurn]:
    """``turns`` questions on the bare page through a proxy with ``fault``, each read once
    the page is no longer loading (or ``BARE_PATIENCE_S`` after)."""
    context = await browser.new_context()
    proxy = await jstools.OneRequestProxy(api.port, fault).start()
    shown: list[BareTurn] = []
    try:
        page = await context.new_page()
        await open_page(page, url_of(proxy.url))
        for turn in range(turns):
            ask = question()
            await page.evaluate(SUBMIT, ask)
            await idle(page, BARE_PATIENCE_S)
            expected = await healthy_answer(api.url, ask)
            answers = await page.evaluate(ANSWERS)
            answer = answers[turn] if turn < len(answers) else None
            error = await page.evaluate(PAGE_ERROR)
            shown.append(BareTurn(Turn(expected, answer, None, 0, 1, "", ""), error))
        return shown
    finally:
        await context.close()
        await proxy.stop()


@dataclass
class Reloaded:
    turn: Turn
    messages: list[list[str]]  # the page's messages at the end: class, id
    error: str  # the page's error, if it shows one

    def verdict(self) -> str:
        if not self.turn.thread_id:  # the bare page's
            return BareTurn(self.turn, self.error).verdict()
        verdict = self.turn.verdict()
        assistants = [kind for kind, _ in self.messages].count("msg msg-assistant")
        return verdict if assistants == 1 else f"{verdict}; {assistants} answer messages"


async def reload_while_recovering(
    browser: Browser, api: DevServer, url_of: Callable[[str], str]
) -> tuple[Reloaded, FaultProxy]:
    """One question; once 40 characters of its answer show, its streams are cut (every
    reconnect too) and the page is reloaded half a second later: what it shows for the
    turn then (the bare page's once it is no longer loading)."""
    context = await browser.new_context()
    proxy = await jstools.OneRequestProxy(api.port, Fault()).start()
    try:
        page = await context.new_page()
        await open_page(page, url_of(proxy.url))
        ask = question()
        await page.evaluate(SUBMIT, ask)
        await page.wait_for_function(
            "n => (window.answers()[0] ?? '').length >= n",
            arg=ANSWER_CHARS_AT_STOP,
            timeout=30_000,
            polling=20,
        )
        thread_id = await page.evaluate("() => document.querySelector('#chat').dataset.thread")
        proxy.arm(Fault("cut", 0, times=None))
        assert proxy.cut_open() >= 1, f"no stream open to cut; {vars(proxy.stats)}"
        await asyncio.sleep(0.5)
        await page.reload()
        await open_page(page, page.url)
        if thread_id:
            (run_id,) = await runs_of(api.url, thread_id)
            ended, expected, _ = await run_end(api.url, thread_id, run_id)
            _, delay = await shown_within(page, 0, expected, ended, PATIENCE_S)
            runs = len(await runs_of(api.url, thread_id))
        else:
            run_id, delay, runs = "", None, 1
            await idle(page, BARE_PATIENCE_S)
            expected = await healthy_answer(api.url, ask)
        answers = await page.evaluate(ANSWERS)
        turn = Turn(expected, answers[0] if answers else None, delay, 0, runs, thread_id, run_id)
        reloaded = Reloaded(
            turn, await page.evaluate(PAGE_MESSAGES), await page.evaluate(PAGE_ERROR)
        )
        return reloaded, proxy
    finally:
        await context.close()
        await proxy.stop()


# ---- a Stop on the bare page: its run found among the server's busy threads


async def _busy_threads(http: httpx.AsyncClient) -> set[str]:
    response = await http.post("/threads/search", json={"status": "busy", "limit": 100})
    response.raise_for_status()
    return {thread["thread_id"] for thread in response.json()}


async def _run_over(http: httpx.AsyncClient, thread_id: str) -> str | None:
    """The threadless run's status once it is over ("deleted": its temporary thread is
    gone, as the server deletes it at the run's end); None while it runs."""
    response = await http.get(f"/threads/{thread_id}/runs")
    if response.status_code == 404:
        return "deleted"
    response.raise_for_status()
    statuses = [run["status"] for run in response.json()]
    return None if not statuses or {"pending", "running"} & set(statuses) else statuses[0]


async def bare_stop(
    browser: Browser, api: DevServer, url_of: Callable[[str], str], stop_after_cut_s: float | None
) -> Stopped:
    """``browser_stop.ask_and_stop`` on the bare page (paced agent): a paced question,
    Stop mid-answer or ``stop_after_cut_s`` after its streams were cut, then a quick
    question. A run gone within ``CANCEL_WITHIN_S`` of the Stop counts as cancelled:
    the paced run takes far longer to end by itself."""
    context = await browser.new_context()
    proxy = await jstools.OneRequestProxy(api.port, Fault()).start()
    try:
        page = await context.new_page()
        await open_page(page, f"{url_of(proxy.url)}&assistant={SLOW_GRAPH}")
        async with local_client(api.url, timeout=10) as http:
            busy_before = await _busy_threads(http)
            pace = SLOWER if (stop_after_cut_s or 0) > 3 else SLOW
            await page.evaluate(SUBMIT, paced_question(pace))
            await page.wait_for_function(
                "n => (window.answers()[0] ?? '').length >= n",
                arg=ANSWER_CHARS_AT_STOP,
                timeout=30_000,
                polling=20,
            )
            (thread_id,) = await _busy_threads(http) - busy_before
            if stop_after_cut_s is not None:
                proxy.arm(Fault("cut", 0, times=None))
                assert proxy.cut_open() >= 1, f"no stream open to cut; {vars(proxy.stats)}"
                await asyncio.sleep(stop_after_cut_s)
            at_stop = await page.evaluate(STOP)
            stopped_at = time.monotonic()
            proxy.arm(Fault())
            idle_in = await idle(page, SHOW_WITHIN_S)
            status = None
            while status is None and time.monotonic() - stopped_at <= CANCEL_WITHIN_S:
                status = await _run_over(http, thread_id)
                await asyncio.sleep(0.05)
            cancelled_in = None if status is None else time.monotonic() - stopped_at
            ask = question()
            await page.evaluate(SUBMIT, ask)
            await idle(page, BARE_PATIENCE_S)
            expected = await healthy_answer(api.url, ask)
        await asyncio.sleep(SHOW_WITHIN_S)
        answers = await page.evaluate(ANSWERS)
        return Stopped(
            0,
            at_stop,
            answers[0] if answers else None,
            status or "running",
            cancelled_in,
            idle_in,
            len(answers) > 1 and answers[1] == expected,
            1,
            next_shown=answers[1] if len(answers) > 1 else None,
            next_ran=len(answers) > 1,
        )
    finally:
        await context.close()
        await proxy.stop()
