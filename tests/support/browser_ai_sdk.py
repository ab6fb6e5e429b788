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
from playwright.async_api import Browser, ConsoleMessage, Page, Request, Response
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.support import jstools
from tests.support.browser_langchain import question
from tests.support.browser_page import RUN_TIMEOUT_S, SHOW_WITHIN_S, SUBMIT, run_end, runs_of
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
# The parts of the page's last answer message as it renders them, in order: a tool call
# as its id, state and output; reasoning and text as their text.
PARTS = """() => {
  const message = [...document.querySelectorAll('.msg-assistant')].pop();
  if (!message) return [];
  return [...message.querySelectorAll('.part-tool, .part-reasoning, .part-text')].map((p) =>
    p.classList.contains('part-tool')
      ? ['tool', p.dataset.call, p.dataset.state, p.dataset.output]
      : [p.classList.contains('part-reasoning') ? 'reasoning' : 'text', p.textContent]);
}"""


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


def _kinds(parts: list[list[str]]) -> list[str]:
    """The parts' kinds in order, a run of one kind as one."""
    kinds: list[str] = []
    for part in parts:
        if not kinds or kinds[-1] != part[0]:
            kinds.append(part[0])
    return kinds


def parts_lost(before: list[list[str]], after: list[list[str]]) -> list[str]:
    """What the answer message showed (``PARTS``) before that it no longer shows after:
    a tool call, its state or result, a reasoning text, or the parts' order. Its text
    only grows, which the turn's own verdict says."""
    lost = [f"tool call {part[1:]}" for part in before if part[0] == "tool" and part not in after]
    reasoning = [part for part in after if part[0] == "reasoning"]
    for part in before:
        if part[0] == "reasoning" and part not in reasoning:
            lost.append(f"reasoning {part[1]!r}")
    if _kinds(after)[: len(_kinds(before))] != _kinds(before):
        lost.append(f"the order {_kinds(before)} (now {_kinds(after)})")
    return lost


@dataclass
class Reloaded:
    turn: Turn
    messages: list[list[str]]  # the page's messages at the end: class, id
    error: str  # the page's error, if it shows one
    parts_before: list[list[str]]  # the answer message's parts when reloaded (PARTS)
    parts: list[list[str]]  # and at the end

    def lost(self) -> list[str]:
        return parts_lost(self.parts_before, self.parts)

    def verdict(self) -> str:
        if not self.turn.thread_id:  # the bare page's
            return BareTurn(self.turn, self.error).verdict()
        verdict = self.turn.verdict()
        if self.lost():
            verdict = f"{verdict}; parts lost: {', '.join(self.lost())}"
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
        parts_before = await page.evaluate(PARTS)
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
            turn,
            await page.evaluate(PAGE_MESSAGES),
            await page.evaluate(PAGE_ERROR),
            parts_before,
            await page.evaluate(PARTS),
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


# ---- a new chat: what the browser's console says while the page opens it and asks


@dataclass
class NewChat:
    api_requests: list[str]  # the requests the page made of the API: method, path, status
    console_errors: list[str]  # what the browser logged as errors
    aborted: list[str]  # requests the page itself aborted (a stream it ended): no failure
    answer: str | None  # the chat's first answer on the page
    expected: str  # the route's answer to its question

    def failures(self) -> list[str]:
        failed = [request for request in self.api_requests if not request.endswith(" 200")]
        logged = [f"console: {error}" for error in self.console_errors]
        return [f"failed request: {request}" for request in failed] + logged


async def new_chat(browser: Browser, api: DevServer, url_of: Callable[[str], str]) -> NewChat:
    """A new chat opened (its resume check on mount), then one question asked in it: every
    request the page made of the API, and every error the console logged."""
    context = await browser.new_context()
    requests: list[str] = []
    errors: list[str] = []
    aborted: list[str] = []
    try:
        page = await context.new_page()

        def logged(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(message.text)

        def answered(response: Response) -> None:
            if response.url.startswith(api.url) and response.request.method != "OPTIONS":
                path = response.url[len(api.url) :]
                requests.append(f"{response.request.method} {path} {response.status}")

        def failed(request: Request) -> None:
            said = f"{request.method} {request.url} failed: {request.failure}"
            (aborted if request.failure == "net::ERR_ABORTED" else requests).append(said)

        page.on("console", logged)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("response", answered)
        page.on("requestfailed", failed)
        await open_page(page, url_of(api.url))
        # The resume check has answered once the page asked the API and went quiet.
        began = time.monotonic()
        while not requests and time.monotonic() - began < 10:
            await asyncio.sleep(0.05)
        await page.wait_for_load_state("networkidle")
        assert requests, "the page made no request on opening a chat: no resume check seen"
        ask = question()
        await page.evaluate(SUBMIT, ask)
        await page.wait_for_function("() => window.chat.loading()", timeout=10_000, polling=20)
        await idle(page, PATIENCE_S + RUN_TIMEOUT_S)
        answers = await page.evaluate(ANSWERS)
        thread_id = await page.evaluate("() => document.querySelector('#chat').dataset.thread")
        async with local_client(api.url, timeout=10) as http:
            route = f"/api/threads/{thread_id}/final-answer"
            text = await http.get(route, params={"format": "text"})
            text.raise_for_status()
        answer = answers[0] if answers else None
        return NewChat(list(requests), list(errors), list(aborted), answer, text.text)
    finally:
        await context.close()


# ---- a reload after a Stop: the stopped turn as it was shown


@dataclass
class ReloadedAfterStop:
    at_stop: list[list[str]]  # the answer message's parts once the page was idle (PARTS)
    reloaded: list[list[str]]  # and after the reload, the resume check done
    status: str  # the run's, on the server
    error: str  # the page's error after the reload, if it shows one


async def reload_after_stop(
    browser: Browser, api: DevServer, url_of: Callable[[str], str]
) -> ReloadedAfterStop:
    """A paced question stopped once its answer shows, then the page reloaded: what the
    stopped turn's message shows once the resume check on mount is done."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await open_page(page, f"{url_of(api.url)}&assistant={SLOW_GRAPH}")
        await page.evaluate(SUBMIT, paced_question(SLOW))
        await page.wait_for_function(
            "n => (window.answers()[0] ?? '').length >= n",
            arg=ANSWER_CHARS_AT_STOP,
            timeout=30_000,
            polling=20,
        )
        await page.evaluate(STOP)
        await idle(page, SHOW_WITHIN_S)
        thread_id = await page.evaluate("() => document.querySelector('#chat').dataset.thread")
        (run_id,) = await runs_of(api.url, thread_id)
        status = "running"
        began = time.monotonic()
        async with local_client(api.url, timeout=10) as http:
            while status in ("pending", "running") and time.monotonic() - began < CANCEL_WITHIN_S:
                status = (await http.get(f"/threads/{thread_id}/runs/{run_id}")).json()["status"]
                await asyncio.sleep(0.05)
        at_stop = await page.evaluate(PARTS)
        await page.reload()
        await open_page(page, page.url)
        await page.wait_for_load_state("networkidle")
        await idle(page, SHOW_WITHIN_S)
        return ReloadedAfterStop(
            at_stop, await page.evaluate(PARTS), status, await page.evaluate(PAGE_ERROR)
        )
    finally:
        await context.close()
