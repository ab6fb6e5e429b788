"""A real browser on the test chat page (tests/js/browser/app.jsx), cross-origin from a real
``langgraph dev`` behind the fault proxy: build and serve the page, drive it with
playwright in Debian's chromium, and read what it shows the user at a run's end.

Shared by the browser tests (tests/js/test_browser_recovery.py) and the measured table in
docs/webui-integration.md (``make webui-browser-table``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.support import jstools
from tests.support.jstools import REPO
from tests.support.local_http import local_client

PAGE_SOURCE = REPO / "tests" / "js" / "browser"
# The run's end to the page showing the route's answer: the bar.
SHOW_WITHIN_S = 1.0
RUN_TIMEOUT_S = 60.0
SUBMIT = "q => { window.chat.submit(q); }"


@asynccontextmanager
async def headless_chromium() -> AsyncIterator[Browser]:
    """Debian's chromium, driven by playwright (no browser download), closed after."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(jstools.chromium()), args=jstools.CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()


def build_page(node: str, outdir: Path, env: dict[str, str] | None = None) -> Path:
    """Bundle the pages with esbuild (clients/js's devDependency); ``env``:
    ``jstools.sdk_env`` for an SDK other than the lockfile's."""
    subprocess.run(
        [node, str(PAGE_SOURCE / "build.mjs"), str(outdir)],
        check=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    return outdir


@contextmanager
def static_site(root: Path) -> Iterator[str]:
    """Serve ``root`` on its own port: another origin than the API's."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def squash(text: str) -> str:
    """Runs of whitespace as one space, as the page's visible text shows them."""
    return " ".join(text.split())


@dataclass
class Shown:
    """What the page showed for one run, read 1 s after the run ended."""

    expected: str
    answer: str | None  # the text of the message the route names, None if absent
    body: str  # the page's whole visible text
    tool_calls: int
    delay: float | None  # run end → exact answer on the page; None: not within the wait
    thread_id: str
    run_id: str
    page_state: str = ""  # the page's loading flag and recovery status, for failures
    runs: int = 1  # runs this submit made (the SDK may re-send a POST)
    message_id: str | None = None  # the answer's, as the route names it

    @property
    def exact(self) -> bool:
        return self.answer == self.expected

    @property
    def doubled(self) -> bool:
        head = self.head
        # Each run of the same question answers it once, in its own message.
        return bool(head) and squash(self.body).count(head) > self.runs

    @property
    def head(self) -> str:
        """The answer's first words, spaced as the page's text shows them."""
        return squash(self.expected)[:60]

    def verdict(self) -> str:
        """One cell of the measured table."""
        if self.exact and not self.doubled:
            verdict = "exact" if self.delay is not None else "exact (late)"
            if self.runs > 1:
                verdict += f" ({self.runs} runs: the SDK re-sent the POST)"
            return verdict
        text = self.answer or ""
        if self.doubled or len(text) > len(self.expected):
            return f"doubled: {len(text)}/{len(self.expected)} chars"
        if not text:
            return "no answer shown"
        return f"truncated: {len(text)}/{len(self.expected)} chars"


async def open_chat(page: Page, site: str, api: str, hook: str) -> None:
    await page.goto(f"{site}/index.html?api={api}&hook={hook}")
    await page.wait_for_function("() => window.chat !== undefined")


async def thread_of(page: Page) -> str:
    handle = await page.wait_for_function(
        "() => document.querySelector('#chat')?.dataset.thread || null", timeout=30_000
    )
    return str(await handle.json_value())


async def run_status(api: str, thread_id: str, run_id: str) -> str:
    async with local_client(api, timeout=10) as http:
        response = await http.get(f"/threads/{thread_id}/runs/{run_id}")
        response.raise_for_status()
        return str(response.json()["status"])


async def runs_of(api: str, thread_id: str) -> list[str]:
    """The thread's run ids, oldest first (none while the server has no such thread: a
    client-made thread id exists once its first run is accepted)."""
    async with local_client(api, timeout=10) as http:
        response = await http.get(f"/threads/{thread_id}/runs", params={"limit": 50})
        if response.status_code == 404:
            return []
        response.raise_for_status()
        runs = sorted(response.json(), key=lambda run: run["created_at"])
        return [str(run["run_id"]) for run in runs]


async def nth_run(api: str, thread_id: str, n: int, within_s: float = 30.0) -> str:
    """The id of the thread's ``n``-th run (1-based), once it exists."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        runs = await runs_of(api, thread_id)
        if len(runs) >= n:
            return runs[n - 1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"thread {thread_id} never got run #{n}")


async def run_end(api: str, thread_id: str, run_id: str) -> tuple[float, str, str | None]:
    """Wait (long-poll) for the run's end, asking the server directly, not through the
    proxy. Returns when it ended (monotonic), the route's ``format=text`` answer and
    the answer's message id."""
    async with local_client(api, timeout=RUN_TIMEOUT_S + 10) as http:
        route = f"/api/threads/{thread_id}/final-answer"
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while True:
            body = (await http.get(route, params={"run_id": run_id, "wait": 30})).json()
            if body["complete"] or time.monotonic() > deadline:
                break
        seen = time.monotonic()
        assert body["complete"], body
        # The run ended with its last checkpoint (``completed_at``): this poll saw that
        # later, and later still on a loaded machine. (None: a run that ended with no
        # checkpoint of its own, e.g. one cancelled before its first.)
        completed = body["completed_at"]
        ended = seen if completed is None else min(seen, monotonic_clock(completed))
        text = await http.get(route, params={"run_id": run_id, "format": "text"})
        # Shown with a failure: how the route called the run's end (one run of a fresh
        # clone's CI read as complete with an empty text, once; not seen again).
        print(f"run_end {run_id}: {body['status']} {body.get('error')} {len(text.text)} chars")
        return ended, text.text, body["message_id"]


ANSWER_OF = """([id]) => {
  const node = document.querySelector(`.msg[data-id="${CSS.escape(id)}"] .text`);
  return node ? node.textContent : null;
}"""


async def shown_after_run(
    page: Page,
    api: str,
    runs_before: int,
    *,
    reload_after_s: float | None = None,
    late_wait_s: float = 0.0,
) -> Shown:
    """Follow the run the page's latest submit started (the thread had ``runs_before``)
    to its end and read what the page shows
    ``SHOW_WITHIN_S`` after it; ``delay`` also counts an answer shown up to
    ``late_wait_s`` later (for the record: ``verdict`` is about the first second)."""
    thread_id = await thread_of(page)
    run_id = await nth_run(api, thread_id, runs_before + 1)
    if reload_after_s is not None:
        await asyncio.sleep(reload_after_s)
        await page.reload()
    await watch_first_shown(page)
    ended, expected, message_id = await run_end(api, thread_id, run_id)
    # The SDK re-sends a POST whose response never came (its fetch retries a network
    # error): a second run of the same input, which the page then streams. Follow the
    # newest until no newer one comes.
    while (runs := await runs_of(api, thread_id))[-1] != run_id:
        run_id = runs[-1]
        ended, expected, message_id = await run_end(api, thread_id, run_id)
    delay = await _shown_within(page, message_id, expected, ended, SHOW_WITHIN_S)
    await asyncio.sleep(max(0.0, ended + SHOW_WITHIN_S - time.monotonic()))
    answer = await page.evaluate(ANSWER_OF, [message_id])
    body = await page.inner_text("#chat")
    tool_calls = await page.locator(".tool-call").count()
    state = await page.evaluate(
        "() => JSON.stringify(document.querySelector('#chat')?.dataset ?? {})"
    )
    runs = len(await runs_of(api, thread_id)) - runs_before
    if delay is None and late_wait_s > 0:
        delay = await _shown_within(page, message_id, expected, ended, late_wait_s)
    return Shown(
        expected, answer, body, tool_calls, delay, thread_id, run_id, state, runs, message_id
    )


async def _shown_within(
    page: Page, message_id: str | None, expected: str, ended: float, limit_s: float
) -> float | None:
    """Seconds from ``ended`` until the page showed ``expected``, as the page recorded it
    (``watch_first_shown``); None past ``limit_s``. Read from the page's own record, not
    from when this process looked: on a loaded machine the test's reads come late too,
    and a page that showed the answer in time was measured late (2.9 s, in CI)."""
    shown_at = await _first_shown(page, message_id, expected)
    remaining = ended + limit_s - time.monotonic()
    if shown_at is None and remaining > 0:
        with contextlib.suppress(PlaywrightTimeout):
            await page.wait_for_function(
                f"([id, want]) => ({ANSWER_OF})([id]) === want",
                arg=[message_id, expected],
                timeout=remaining * 1000,
                polling=20,
            )
        shown_at = await _first_shown(page, message_id, expected)
    if shown_at is None:
        return None
    delay = shown_at - wall_clock(ended)
    return delay if delay <= limit_s else None


# When each message first showed each of its texts, in ms on the wall clock: a mutation
# observer's callback runs after each change, before the browser paints.
WATCH_FIRST_SHOWN = """() => {
  if (window.firstShown) return;
  window.firstShown = {};
  const record = () => {
    const now = performance.timeOrigin + performance.now();
    for (const node of document.querySelectorAll(".msg[data-id] .text")) {
      const seen = (window.firstShown[node.parentElement.dataset.id] ??= {});
      seen[node.textContent] ??= now;
    }
  };
  record();
  new MutationObserver(record).observe(document.body, {
    subtree: true, childList: true, characterData: true,
  });
}"""


async def watch_first_shown(page: Page) -> None:
    """From now on (until the page is reloaded), the page records when each message
    first showed each text."""
    await page.evaluate(WATCH_FIRST_SHOWN)


async def texts_shown(page: Page) -> dict[str, list[str]]:
    """Every text each message showed since ``watch_first_shown``, by message id."""
    return await page.evaluate(
        "() => Object.fromEntries(Object.entries(window.firstShown ?? {})"
        ".map(([id, texts]) => [id, Object.keys(texts)]))"
    )


async def _first_shown(page: Page, message_id: str | None, text: str) -> float | None:
    """When (seconds, wall clock) the message first showed ``text``; None if it has not."""
    shown_at = await page.evaluate(
        "([id, text]) => window.firstShown?.[id]?.[text] ?? null", [message_id, text]
    )
    return None if shown_at is None else shown_at / 1000


def wall_clock(monotonic: float) -> float:
    """A ``time.monotonic()`` reading on the wall clock (the page's clock)."""
    return time.time() - (time.monotonic() - monotonic)


def monotonic_clock(iso_time: str) -> float:
    """An ISO 8601 time (the route's) on this process's ``time.monotonic()`` clock."""
    return time.monotonic() - (time.time() - datetime.fromisoformat(iso_time).timestamp())


# ---- token streaming: what the page shows while a run streams

WATCH_TEXTS = """() => {
  // Every text each message shows, as the user could see it: a mutation observer's
  // callback runs once per task, before the browser paints.
  window.shownTexts = {};
  const record = () => {
    for (const node of document.querySelectorAll(".msg[data-id] .text")) {
      const id = node.parentElement.dataset.id;
      (window.shownTexts[id] ??= []).push(node.textContent);
    }
  };
  new MutationObserver(record).observe(document.getElementById("root"), {
    subtree: true, childList: true, characterData: true,
  });
}"""


async def watch_texts(page: Page) -> None:
    """From now on, record every text each message of the page shows."""
    await page.evaluate(WATCH_TEXTS)


async def distinct_lengths(page: Page, message_id: str | None) -> int:
    """How many distinct non-empty text lengths the message showed since watch_texts."""
    texts = await page.evaluate("([id]) => window.shownTexts[id] ?? []", [message_id])
    return len({len(text) for text in texts if text})


async def stream_modes(api: str, thread_id: str, run_id: str) -> list[str]:
    """The stream modes the run was asked for, as the server recorded them."""
    async with local_client(api, timeout=10) as http:
        response = await http.get(f"/threads/{thread_id}/runs/{run_id}")
        response.raise_for_status()
        modes = response.json()["kwargs"]["stream_mode"]
        return sorted([modes] if isinstance(modes, str) else modes)
