"""A user's Stop, and a thread switch mid-run, on any chat page in a real browser: pages
whose ``window.chat`` submits, stops (the page's Stop button), says whether it loads and
switches threads (``switchTo(id)``, null for a new thread), and whose turns
tests/js/browser/answers.js reads (``window.answers()``). The server is a real
``langgraph dev`` serving the paced agent (tests/support/slow_agent_graph.py), so that a
Stop lands while its run goes on; the page reaches it through the fault proxy, which can
cut the stopped turn's streams first.

Stop is the user's word: the run is cancelled on the server, the page goes idle, and the
turn keeps the text it showed at Stop through the next question, no frame in between
showing less of the thread. Shared by the browser
modules and their rows of docs/webui-browser-table.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from playwright.async_api import Browser, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.support.browser_langchain import ProtocolProxy
from tests.support.browser_page import (
    SHOW_WITHIN_S,
    nth_run,
    run_end,
    run_status,
    runs_of,
    thread_of,
)
from tests.support.page_timeline import PageTimeline
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer
from tests.support.slow_agent_graph import SLOW, SLOW_GRAPH, SLOWER

# Stop → the run no longer running on the server: the bar.
CANCEL_WITHIN_S = 3.0
# The answer shown before a Stop mid-answer is pressed.
ANSWER_CHARS_AT_STOP = 40
# A Stop row's cut: the streams open once the answer shows, and every reconnect after.
RECONNECTS_CUT = Fault("cut", 0, times=None)
# The thread's reads (its history, its state) a Stop is made to wait on in the blink
# check, and how late they answer: long enough that a page which shows less while one
# is under way shows it for many frames (on a quick server, for one frame or none).
THREAD_READS = ("/history", "/state")
LATE_READ_S = 1.0
MID_ANSWER = "Stop mid-answer"
SWITCH = "switch to another thread mid-run, come back after its end"
# Row → seconds from the cut to the Stop (None: no cut, Stop mid-answer).
STOP_ROWS: dict[str, float | None] = {
    MID_ANSWER: None,
    "Stop 1 s after a cut, while recovering": 1.0,
    "Stop 6 s after a cut, while recovering": 6.0,
}
ANSWERS = "() => window.answers()"
# What the page shows, as counts (its messages, `.msg`, and their characters): sampled
# each frame (requestAnimationFrame: the state the browser paints next) and at each DOM
# change (MutationObserver: a state too short-lived to be painted is still a race that
# can be). Only changes are kept; `mark()` notes the state at a Stop, from which on
# neither count may drop (a blink of the conversation, even for one frame, is a defect).
SHOWN_COUNTS = """() => {
  if (window.shownCounts) return;
  const now = () => {
    const messages = document.querySelectorAll('.msg');
    let chars = 0;
    for (const m of messages) chars += m.textContent.length;
    return { t: performance.now(), messages: messages.length, chars };
  };
  const log = { frames: [], changes: [] };
  const note = (list, state = now()) => {
    const last = list[list.length - 1];
    if (!last || last.messages !== state.messages || last.chars !== state.chars) list.push(state);
  };
  log.mark = () => {
    const state = now();
    log.frames.push(state);
    log.changes.push(state);
    return state;
  };
  const frame = () => { note(log.frames); requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
  new MutationObserver(() => note(log.changes)).observe(document.body,
    { subtree: true, childList: true, characterData: true });
  window.shownCounts = log;
}"""
# Every state from a mark on (its `t`), of each kind.
SINCE_MARK = """(at) => {
  const since = (list) => list.filter((s) => s.t >= at.t);
  const log = window.shownCounts;
  return { frames: since(log.frames), changes: since(log.changes) };
}"""
PAGE_MESSAGES = """() => [...document.querySelectorAll('.msg')].map(
  (m) => `${m.className} ${(m.dataset.id || '').slice(-12)} ${m.innerText.length}`)"""
_questions = itertools.count(1)


def paced(url_of: Callable[[str], str]) -> Callable[[str], str]:
    """``url_of`` (a page's URL through a proxy's) asking the paced agent."""
    return lambda api: f"{url_of(api)}&assistant={SLOW_GRAPH}"


def question(pace: str = "") -> str:
    """A question; ``pace``: ``SLOW`` or ``SLOWER`` (the paced agent's), else quick."""
    paced = f" {pace}" if pace else ""
    return f"Stop question {next(_questions):04d}{paced}: which control group fits?"


@dataclass
class Stopped:
    """One turn the user stopped, and the next question asked after it."""

    turn: int  # the turn's index on the page
    at_stop: str  # the turn's answer as the page showed it at Stop (see ``stop_turn``)
    after_next: str | None  # the same turn once the next question's run ended
    status: str  # the stopped run's, as the server ended it
    cancelled_in: float | None  # Stop → the run over on the server; None: not within the bar
    idle_in: float | None  # Stop → the page not loading; None: not within a second
    next_exact: bool  # the next question's answer was the route's
    runs: int  # runs the stopped submit made
    next_shown: str | None = None  # the next question's answer as shown, for a failure
    next_ran: bool = True  # the next question started a run
    # The page's messages then (class, id, text length), for a failure.
    page_messages: list[str] = dataclasses.field(default_factory=list)
    # What the page showed at Stop ({t, messages, chars}: SHOWN_COUNTS), and every state
    # from then until the next question's answer was read: {"frames": [...], "changes":
    # [...]}, each state as the mark.
    counts_at_stop: dict[str, float] | None = None
    since_stop: dict[str, list[dict[str, float]]] | None = dataclasses.field(
        default=None, repr=False
    )
    # The page's requests and sockets (PageTimeline), for a failure.
    timeline: str = dataclasses.field(default="", repr=False)
    at_click: str | None = None  # the DOM's read at the click (``at_stop`` may be its frame)

    def blinks(self) -> list[str]:
        """Each stretch in which the page showed fewer messages or characters than at
        Stop (in painted frames, in DOM states): when, how long, how few. Empty when it
        never did."""
        at = self.counts_at_stop
        if at is None or not self.since_stop:
            return []
        if at["messages"] == 0:
            return ["no message counted at Stop: the page's messages are not `.msg` elements"]
        said = []
        for kind, states in self.since_stop.items():
            stretch: list[dict[str, float]] = []
            for state in [*states, None]:
                if state is not None and (
                    state["messages"] < at["messages"] or state["chars"] < at["chars"]
                ):
                    stretch.append(state)
                    continue
                if stretch:
                    low = min(stretch, key=lambda s: (s["messages"], s["chars"]))
                    until = (
                        f"for {(state['t'] - stretch[0]['t']) / 1000:.3f} s"
                        if state is not None
                        else "to the end"
                    )
                    said.append(
                        f"{kind}: {low['messages']:.0f} messages, {low['chars']:.0f} chars"
                        f" ({at['messages']:.0f}, {at['chars']:.0f} at Stop) from"
                        f" {(stretch[0]['t'] - at['t']) / 1000:.3f} s after Stop {until}"
                    )
                stretch = []
        return said

    @property
    def kept(self) -> bool:
        return self.after_next == self.at_stop

    @property
    def cancelled(self) -> bool:
        return self.cancelled_in is not None and self.status not in (
            "success",
            "pending",
            "running",
        )

    def verdict(self) -> str:
        """One cell of the measured table."""
        shown = len(self.at_stop)
        after = self.after_next or ""
        if self.kept:
            verdict = f"stopped: {shown}/{shown} chars kept"
        elif after.startswith(self.at_stop):
            verdict = f"stopped, then more shown: {len(after)} chars ({shown} at Stop)"
        else:
            common = len(_common_prefix(after, self.at_stop))
            verdict = f"stopped: {common}/{shown} chars kept"
        verdict += ", run cancelled" if self.cancelled else f", run not cancelled ({self.status})"
        if self.idle_in is None:
            verdict += "; still loading 1 s after Stop"
        if not self.next_ran:
            verdict += "; the next question made no run"
        elif not self.next_exact:
            verdict += "; the next answer not exact"
        if self.runs > 1:
            verdict += f" ({self.runs} runs)"
        return verdict


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


async def _until(check: Callable[[], object], within_s: float) -> float | None:
    """Seconds until ``await check()`` is truthy, polled every 20 ms; None past ``within_s``."""
    began = time.monotonic()
    while time.monotonic() - began <= within_s:
        if await check():  # type: ignore[misc]
            return time.monotonic() - began
        await asyncio.sleep(0.02)
    return None


async def _turns(page: Page) -> list[str]:
    return list(await page.evaluate(ANSWERS))


async def ask_and_stop(
    page: Page,
    api: str,
    proxy: FaultProxy,
    *,
    stop_after_cut_s: float | None = None,
    patience_s: float = 10.0,
    stop_is_a_request: bool = False,
) -> Stopped:
    """Ask a paced question and press Stop: mid-answer, or ``stop_after_cut_s`` after its
    streams were cut mid-answer (and every reconnect); then ask a quick next question and
    read both turns."""
    stopped = await stop_turn(
        page, api, proxy, stop_after_cut_s=stop_after_cut_s, stop_is_a_request=stop_is_a_request
    )
    (stopped,) = await next_question(page, api, [stopped], patience_s)
    return stopped


# Read what the page shows, mark the frames, press Stop. A page that counts the events
# its runtime took (``chat.pulled``) also gives its next frame, and the counts at the
# click and after that frame. ``between``: the click comes in the task that took a
# messages event, once the runtime has set its state from it and before it is drawn.
STOP = """async ([t, between]) => {
  if (between) {
    await new Promise((resolve) => {
      window.chat.onPull = (event) => {
        if (!String(event?.event).startsWith('messages')) return;
        window.chat.onPull = null;
        resolve();
      };
    });
    for (let hop = 0; hop < 20; hop += 1) await null;
  }
  const shown = window.answers()[t] ?? '';
  const counts = window.shownCounts.mark();
  const pulled = window.chat.pulled?.();
  window.chat.stop();
  if (pulled === undefined) return [shown, counts, null, null];
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  return [shown, counts, window.answers()[t] ?? '', [pulled, window.chat.pulled()]];
}"""


async def stop_turn(
    page: Page,
    api: str,
    proxy: FaultProxy,
    *,
    stop_after_cut_s: float | None = None,
    patience_s: float = 10.0,
    stop_is_a_request: bool = False,
    late_reads: tuple[str, ...] = (),
    between_event_and_frame: bool = False,
) -> Stopped:
    """Ask a paced question and press Stop: mid-answer, or ``stop_after_cut_s`` after its
    streams were cut mid-answer (and every reconnect of them: the page is recovering);
    ``late_reads``: requests answered ``LATE_READ_S`` late from the Stop on (the proxy's
    ``answer_late``, left on for the caller to end).
    What the page showed at Stop, how soon the run was over on the server and the page
    idle; ``after_next`` is left for ``next_question``. A Stop more than a few seconds
    after the cut asks the slower pace (its run still goes on).

    ``stop_is_a_request``: the page's Stop reaches the one streaming the run by a request
    of its own, not by closing the stream (CopilotKit's: the browser keeps reading the
    runtime's stream until the runtime ends it), so what the runtime sent before the
    Stop reached it still shows: "at Stop" is then what the page shows once idle, which
    must begin with what it showed at the click."""
    await page.evaluate(SHOWN_COUNTS)
    turn = len(await _turns(page))
    runs_before = len(await runs_of(api, await thread_of(page))) if turn else 0
    proxy.arm(Fault())
    pace = SLOWER if (stop_after_cut_s or 0) > 3 else SLOW
    await page.evaluate("q => { window.chat.submit(q); }", question(pace))
    thread_id = await thread_of(page)
    run_id = await nth_run(api, thread_id, runs_before + 1)
    await page.wait_for_function(
        "([t, n]) => (window.answers()[t] ?? '').length >= n",
        arg=[turn, ANSWER_CHARS_AT_STOP],
        timeout=patience_s * 3000,
        polling=20,
    )
    if stop_after_cut_s is not None:
        proxy.arm(RECONNECTS_CUT)
        assert proxy.cut_open() >= 1, f"no stream open to cut; {vars(proxy.stats)}"
        await asyncio.sleep(stop_after_cut_s)
    proxy.answer_late(LATE_READ_S, *late_reads)
    at_click, counts_at_stop, drawn, pulled = await page.evaluate(
        STOP, [turn, between_event_and_frame]
    )
    stopped_at = time.monotonic()
    at_stop = at_click
    if drawn is not None and pulled is not None and pulled[0] == pulled[1]:
        # The page's framework draws its state a task after it is set: an event the
        # runtime took before the click may reach the DOM a frame after it. With no event
        # taken since, that frame is what the page held at Stop.
        assert drawn.startswith(at_click), f"changed at Stop: {at_click!r} → {drawn!r}"
        at_stop = drawn
    proxy.arm(Fault())

    async def run_over() -> bool:
        return await run_status(api, thread_id, run_id) not in ("pending", "running")

    async def idle() -> bool:
        return not await page.evaluate("() => window.chat.loading()")

    idle_in = await _until(idle, SHOW_WITHIN_S)
    if stop_is_a_request and idle_in is not None:
        at_stop = await page.evaluate("t => window.answers()[t] ?? ''", turn)
        assert at_stop.startswith(at_click), f"changed after Stop: {at_click!r} → {at_stop!r}"
    cancelled_in = await _until(run_over, max(0.0, stopped_at + CANCEL_WITHIN_S - time.monotonic()))
    if cancelled_in is not None:
        cancelled_in = time.monotonic() - stopped_at
    status = await run_status(api, thread_id, run_id)
    runs = len(await runs_of(api, thread_id)) - runs_before
    return Stopped(
        turn,
        at_stop,
        None,
        status,
        cancelled_in,
        idle_in,
        False,
        runs,
        counts_at_stop=counts_at_stop,
        at_click=at_click,
    )


async def next_question(
    page: Page, api: str, stopped: list[Stopped], patience_s: float = 10.0
) -> list[Stopped]:
    """Ask a quick question once the page is idle: ``stopped`` with what each stopped
    turn shows once its run ended, and whether its answer was exact."""
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_function("() => !window.chat.loading()", timeout=patience_s * 1000)
    thread_id = await thread_of(page)
    runs_before = len(await runs_of(api, thread_id))
    turn = len(await _turns(page))
    await page.evaluate("q => { window.chat.submit(q); }", question())
    # A bare binding may be left unable to start a run after a Stop: a cell of its own
    # ("the next question made no run"), not an error of the measurement.
    next_run = await _new_run(api, thread_id, runs_before, patience_s)
    expected = None
    if next_run is not None:
        _, expected, _ = await run_end(api, thread_id, next_run)
        with contextlib.suppress(PlaywrightTimeout):
            await page.wait_for_function(
                "([t, want]) => window.answers()[t] === want",
                arg=[turn, expected],
                timeout=patience_s * 1000,
                polling=20,
            )
    await asyncio.sleep(SHOW_WITHIN_S)
    turns = await _turns(page)
    shown = turns[turn] if turn < len(turns) else None
    messages = await page.evaluate(PAGE_MESSAGES)
    return [
        dataclasses.replace(
            one,
            after_next=turns[one.turn] if one.turn < len(turns) else None,
            next_exact=expected is not None and shown == expected,
            next_ran=next_run is not None,
            next_shown=shown,
            page_messages=messages,
            since_stop=(
                await page.evaluate(SINCE_MARK, one.counts_at_stop)
                if one.counts_at_stop is not None
                else None
            ),
        )
        for one in stopped
    ]


async def _new_run(api: str, thread_id: str, runs_before: int, within_s: float) -> str | None:
    """The id of the thread's run after its ``runs_before``, once it exists; None if
    none came within ``within_s``."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        runs = await runs_of(api, thread_id)
        if len(runs) > runs_before:
            return runs[runs_before]
        await asyncio.sleep(0.05)
    return None


@dataclass
class Switched:
    """A thread left mid-run and shown again after its run's end."""

    expected: str
    shown: str | None  # the turn's answer ``SHOW_WITHIN_S`` after coming back
    delay: float | None  # coming back → the exact answer shown; None: not within patience
    runs: int
    left_mid_run: bool  # the run still went on when the page left its thread
    turns: list[str]  # every turn's answer the thread shows then

    @property
    def exact(self) -> bool:
        return self.shown == self.expected

    def verdict(self) -> str:
        if not self.left_mid_run:
            return "not measured: the run ended before the page left it"
        if self.exact and self.delay is not None and self.delay <= SHOW_WITHIN_S:
            verdict = "exact"
        elif self.delay is not None:
            verdict = f"exact {self.delay:.1f} s after coming back"
        elif not self.shown:
            verdict = "no answer shown"
        else:
            verdict = f"truncated: {len(self.shown)}/{len(self.expected)} chars"
        return verdict + (f" ({self.runs} runs)" if self.runs > 1 else "")


async def switch_away_and_back(page: Page, api: str, patience_s: float = 10.0) -> Switched:
    """Ask a paced question; once its answer shows, switch to a new thread; after the
    run's end, come back: what the thread shows then (its turns before included)."""
    turn = len(await _turns(page))
    runs_before = len(await runs_of(api, await thread_of(page))) if turn else 0
    await page.evaluate("q => { window.chat.submit(q); }", question(SLOW))
    thread_id = await thread_of(page)
    run_id = await nth_run(api, thread_id, runs_before + 1)
    await page.wait_for_function(
        "([t, n]) => (window.answers()[t] ?? '').length >= n",
        arg=[turn, ANSWER_CHARS_AT_STOP],
        timeout=patience_s * 3000,
        polling=20,
    )
    await page.evaluate("() => { window.chat.switchTo(null); }")
    left_mid_run = await run_status(api, thread_id, run_id) in ("pending", "running")
    _, expected, _ = await run_end(api, thread_id, run_id)
    await page.evaluate("id => { window.chat.switchTo(id); }", thread_id)
    back = time.monotonic()
    delay: float | None = None
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_function(
            "([t, want]) => window.answers()[t] === want",
            arg=[turn, expected],
            timeout=patience_s * 1000,
            polling=20,
        )
        delay = time.monotonic() - back
    await asyncio.sleep(max(0.0, back + SHOW_WITHIN_S - time.monotonic()))
    turns = await _turns(page)
    runs = len(await runs_of(api, thread_id)) - runs_before
    shown = turns[turn] if turn < len(turns) else None
    return Switched(expected, shown, delay, runs, left_mid_run, turns)


@dataclass
class Session:
    """One page through what a user does mid-run: Stop mid-answer, Stop 1 s after a cut,
    a next question, then a thread left mid-run and shown again after its run's end."""

    stopped: list[Stopped]
    switched: Switched
    timeline: PageTimeline | None = None  # the page's requests and sockets, for a failure

    def failures(self) -> list[str]:
        """What went wrong, for an assertion; empty when the page did all of it right."""
        wrong = []
        for one in self.stopped:
            where = f"turn {one.turn + 1} (stopped)"
            if not one.at_stop:
                wrong.append(f"{where}: nothing shown at Stop")
            if not one.kept:
                wrong.append(f"{where}: {one.verdict()}")
            if not one.cancelled:
                wrong.append(f"{where}: run {one.status}, not cancelled within {CANCEL_WITHIN_S} s")
            if one.idle_in is None:
                wrong.append(f"{where}: still loading 1 s after Stop")
            if one.runs != 1:
                wrong.append(f"{where}: {one.runs} runs")
            if not one.next_exact:
                wrong.append(
                    f"{where}: the next question's answer not exact: {one.next_shown!r};"
                    f" the page's messages {one.page_messages}"
                )
            wrong.extend(f"{where}: {blink}" for blink in one.blinks())
            if one.turn >= len(self.switched.turns) or self.switched.turns[one.turn] != one.at_stop:
                wrong.append(f"{where}: not as shown at Stop after the thread was shown again")
        if self.switched.verdict() != "exact":
            wrong.append(f"thread switch: {self.switched.verdict()}")
        return wrong


async def user_session(
    page: Page, api: str, proxy: FaultProxy, stop_is_a_request: bool = False
) -> Session:
    """``Session`` on ``page`` (open, idle, through ``proxy``); ``stop_is_a_request``:
    ``stop_turn``'s."""
    timeline = PageTimeline(page)
    try:
        first = await stop_turn(page, api, proxy, stop_is_a_request=stop_is_a_request)
        second = await stop_turn(
            page, api, proxy, stop_after_cut_s=1.0, stop_is_a_request=stop_is_a_request
        )
        stopped = await next_question(page, api, [first, second])
        return Session(stopped, await switch_away_and_back(page, api), timeline)
    except AssertionError as exc:
        # A session that cannot go on (a page that starts no more runs) still says what
        # the page sent and when: its timeline goes with the failure.
        raise AssertionError(f"{exc}\n--- the page's timeline ---\n{timeline}") from exc


@contextlib.asynccontextmanager
async def fresh_page(
    browser: Browser, url_of: Callable[[str], str], api: DevServer
) -> AsyncIterator[tuple[Page, ProtocolProxy]]:
    """A fresh page at ``url_of(proxy_url)``, loaded and ready, through a proxy of its own
    to ``api``; both closed after."""
    context = await browser.new_context()
    proxy = await ProtocolProxy(api.port, Fault()).start()
    try:
        page = await context.new_page()
        await page.goto(url_of(proxy.url))
        await page.wait_for_function("() => window.chat !== undefined && window.answers")
        yield page, proxy
    finally:
        await context.close()
        await proxy.stop()


async def session_on(browser: Browser, url_of: Callable[[str], str], api: DevServer) -> Session:
    """``user_session`` on the page at ``url_of(proxy_url)`` (asking the paced agent),
    through a proxy of its own: the answer to give an assertion."""
    async with fresh_page(browser, url_of, api) as (page, proxy):
        return await user_session(page, api.url, proxy)


async def stop_after_a_cut_with_late_reads(
    page: Page, api: str, proxy: FaultProxy, stop_is_a_request: bool = False
) -> Stopped:
    """Stop 1 s after a cut, with the thread's reads answering ``LATE_READ_S`` late from
    the Stop on, then a next question, on ``page`` (open, idle, through ``proxy``): on a
    new page, the turn that opens its thread. Its ``blinks()`` say whether any frame
    showed fewer messages or characters than at Stop."""
    timeline = PageTimeline(page)
    try:
        stopped = await stop_turn(
            page,
            api,
            proxy,
            stop_after_cut_s=1.0,
            stop_is_a_request=stop_is_a_request,
            late_reads=THREAD_READS,
        )
        (stopped,) = await next_question(page, api, [stopped])
    finally:
        proxy.answer_late(0)
    return dataclasses.replace(stopped, timeline=str(timeline))


async def stop_after_a_cut_on_a_new_thread(
    browser: Browser, url_of: Callable[[str], str], api: DevServer
) -> Stopped:
    """``stop_after_a_cut_with_late_reads`` on a fresh page at ``url_of(proxy_url)``
    (asking the paced agent), through a proxy of its own."""
    async with fresh_page(browser, url_of, api) as (page, proxy):
        return await stop_after_a_cut_with_late_reads(page, api.url, proxy)


async def stop_between_an_event_and_its_frame(
    browser: Browser, url_of: Callable[[str], str], api: DevServer
) -> Stopped:
    """Stop in the task that took a messages event, after the page's runtime set its state
    and before its framework drew it, then a next question: on a fresh page at
    ``url_of(proxy_url)`` (asking the paced agent), through a proxy of its own."""
    async with fresh_page(browser, url_of, api) as (page, proxy):
        stopped = await stop_turn(page, api.url, proxy, between_event_and_frame=True)
        (stopped,) = await next_question(page, api.url, [stopped])
        return stopped


async def user_rows(
    browser: Browser, url_of: Callable[[str], str], api: DevServer
) -> dict[str, str]:
    """The table's rows for what a user does mid-run (``STOP_ROWS``, ``SWITCH``), each on
    a fresh page at ``url_of(proxy_url)`` (asking the paced agent): row → cell."""

    async def on_page(do: Callable[[Page, FaultProxy], Awaitable[Stopped | Switched]]) -> str:
        async with fresh_page(browser, url_of, api) as (page, proxy):
            return (await do(page, proxy)).verdict()

    cells = {}
    for row, after_cut_s in STOP_ROWS.items():
        cells[row] = await on_page(
            lambda page, proxy, s=after_cut_s: ask_and_stop(
                page, api.url, proxy, stop_after_cut_s=s
            )
        )
    cells[SWITCH] = await on_page(lambda page, proxy: switch_away_and_back(page, api.url))
    return cells
