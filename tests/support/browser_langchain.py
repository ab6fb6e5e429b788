"""@langchain/react's chat page (tests/js/browser/langchain-react.jsx) in a real browser,
cross-origin from a real ``langgraph dev`` behind the fault proxy, over the binding's v2
protocol (SSE, or one WebSocket): tests/js/test_browser_recovery.py's faults on this
protocol's requests, plus a server restarted mid-run.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import signal
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from playwright.async_api import Browser, Page

from tests.support import jstools
from tests.support.browser_page import (
    ANSWER_OF,
    SHOW_WITHIN_S,
    SUBMIT,
    Shown,
    _shown_within,
    nth_run,
    run_end,
    run_status,
    runs_of,
    shown_after_run,
    texts_shown,
    thread_of,
    watch_first_shown,
)
from tests.support.page_timeline import PageTimeline
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer, free_port, langgraph_dev, runs_written, stop
from tests.support.slow_agent_graph import SLOW_GRAPH, SLOWER
from tests.support.slow_agent_graph import SPEC as SLOW_SPEC

# Runs of a few seconds, so that a reload or a restart lands mid-run.
SERVER_ENV = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.015"}
# The graphs the browser pages ask beside the project's agent (graph id → spec): the
# paced agent, for a Stop or a switch mid-run; one that interrupts for a human's review.
INTERRUPTING = "interrupting"  # tests/support/interrupt_graph.py: a tool call, then interrupt()
GRAPHS = {SLOW_GRAPH: SLOW_SPEC, INTERRUPTING: "tests/support/interrupt_graph.py:graph"}
PAGE = "langchain-react.html"
EVENTS = ("/stream/events",)
COMMANDS = ("/commands",)
TRANSPORTS = ("sse", "websocket")
MID = 0.7  # of a healthy event stream's bytes: inside the answer's tokens
_questions = itertools.count(1)
T = TypeVar("T")


# The fault kind that cuts a WebSocket right after it carried a `run.start` command to
# the server, before the command's answer comes back: the run exists, the page never
# hears of it on that socket.
CUT_AT_RUN_START = "cut at run.start"


@dataclass
class _Socket:
    """One proxied connection, shared by its two directions' tasks (a context variable:
    the upstream task is created inside the connection's own)."""

    run_started: asyncio.Event = field(default_factory=asyncio.Event)


_socket: contextvars.ContextVar[_Socket] = contextvars.ContextVar("socket")


async def _client_frame(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One client→server WebSocket frame: its raw bytes and its unmasked payload."""
    head = await reader.readexactly(2)
    length = head[1] & 0x7F
    extra = b""
    if length == 126:
        extra = await reader.readexactly(2)
        length = int.from_bytes(extra, "big")
    elif length == 127:
        extra = await reader.readexactly(8)
        length = int.from_bytes(extra, "big")
    mask = await reader.readexactly(4) if head[1] & 0x80 else b""
    payload = await reader.readexactly(length)
    plain = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload)) if mask else payload
    return head + extra + mask + payload, plain


class ProtocolProxy(jstools.OneRequestProxy):
    """The browser tests' proxy (``Connection: close`` on every response), except that a
    WebSocket's ``101 Switching Protocols`` keeps its ``Connection: Upgrade``, and
    without WebSocket compression (its extension offer is dropped), so that a fault's
    byte offset lands as far into a socket's events as into an SSE stream's."""

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as partial:
            head = partial.partial
        lines = [
            line
            for line in head.split(b"\r\n")
            if not line.lower().startswith(b"sec-websocket-extensions:")
        ]
        writer.write(b"\r\n".join(lines))
        await writer.drain()
        if self.fault.kind == CUT_AT_RUN_START and b"upgrade: websocket" in head.lower():
            await self._frames(reader, writer)
        else:
            await FaultProxy._pipe(reader, writer)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _socket.set(_Socket())
        await super()._serve(reader, writer)

    async def _frames(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Forward a socket's client frames; the first `run.start` arms its cut before
        it is forwarded, so no answer to it can slip through."""
        state = _socket.get()
        while True:
            try:
                raw, plain = await _client_frame(reader)
            except asyncio.IncompleteReadError:
                return
            if b'"run.start"' in plain and self.stats.fired == 0:
                state.run_started.set()
            writer.write(raw)
            await writer.drain()

    async def _downstream(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        budget: int | None,
        slot: int,
    ) -> int:
        if self.fault.kind == CUT_AT_RUN_START:
            return await self._until_run_start(reader, writer, slot)
        return await super()._downstream(reader, writer, budget, slot)

    async def _until_run_start(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slot: int
    ) -> int:
        """Server→client bytes, until the socket carried a `run.start`: then the cut."""
        state = _socket.get()
        sent = 0
        while chunk := await reader.read(65536):
            if state.run_started.is_set():
                self.stats.fired += 1
                writer.close()
                return sent
            writer.write(chunk)
            await writer.drain()
            sent += len(chunk)
            self.stats.downstream_bytes[slot] = sent
        return sent


# A fault from a healthy event stream's size in bytes and the transport; None: the
# fault has no place on that transport (a WebSocket sends its commands on the socket).
FaultOf = Callable[[int, str], Fault | None]


def _first_streams(kind: str, where: float) -> FaultOf:
    # Over SSE a run opens two event streams (the content pump and a lifecycle watcher),
    # in no fixed order: both are targeted, and only the one carrying the answer is long
    # enough to break. Over WebSocket one socket carries everything.
    def fault(total: int, transport: str) -> Fault:
        times = 2 if transport == "sse" else 1
        return Fault(kind, int(where * total), times=times, match=EVENTS)

    return fault


@dataclass(frozen=True)
class Scenario:
    fault: FaultOf
    turns: int = 1
    reload_after_s: float | None = None
    restart: bool = False  # the server is killed mid-answer and started again


SCENARIOS: dict[str, Scenario] = {
    "no fault": Scenario(lambda total, transport: Fault()),
    # Over SSE the `POST …/commands` carrying `run.start` is cut before its response;
    # over WebSocket the socket is cut once it carried `run.start` to the server, before
    # the command's answer comes back on it.
    "cut before the response": Scenario(
        lambda total, transport: (
            Fault("cut", 0, match=COMMANDS)
            if transport == "sse"
            else Fault(CUT_AT_RUN_START, times=None, match=EVENTS)
        )
    ),
    "cut before the request reaches the server; it arrives 0.5 s later": Scenario(
        lambda total, transport: (
            Fault("late", match=COMMANDS, delay=0.5) if transport == "sse" else None
        )
    ),
    "cut mid-answer": Scenario(_first_streams("cut", MID)),
    "reset (RST) mid-answer": Scenario(_first_streams("reset", MID)),
    "stall mid-answer": Scenario(_first_streams("stall", MID)),
    "cut mid-answer, every reconnect cut": Scenario(
        lambda total, transport: Fault("cut", int(MID * total), times=None, match=EVENTS)
    ),
    "two runs in one page, both cut": Scenario(
        lambda total, transport: Fault("cut", int(MID * total), times=None, match=EVENTS),
        turns=2,
    ),
    # Cut early, in every stream: before the reload (0.5 s into the run) an SSE event
    # stream had sent its headers only, a socket ~600 bytes, so the cut comes inside an
    # SSE stream's headers, a few frames into a socket. (After the reload
    # @langchain/react 1.1.0 opened no event stream in our runs: it shows the state it
    # read, and the rejoin has nothing to cut.)
    "cut, then reload: the rejoin cut too": Scenario(
        lambda total, transport: Fault(
            "cut", 300 if transport == "sse" else int(0.01 * total), times=None, match=EVENTS
        ),
        reload_after_s=0.5,
    ),
    "server restarted mid-run": Scenario(lambda total, transport: Fault(), restart=True),
}


@dataclass
class Outcome:
    shown: list[Shown]
    proxy: FaultProxy
    # Event streams the fault targeted after the last run was read (its reconnects).
    streams_after: int
    timeline: PageTimeline
    # Every text each message showed, by message id (``texts_shown``).
    texts: dict[str, list[str]]

    def answers_shown_in_earlier_turns(self) -> list[str]:
        """Turns whose answer showed, at any moment, in an earlier turn's message."""
        return [
            f"turn {later}'s answer in turn {earlier}'s message"
            for earlier, before in enumerate(self.shown, start=1)
            for later, after in enumerate(self.shown, start=1)
            if later > earlier and after.expected in self.texts.get(before.message_id or "", [])
        ]


def server(
    root: Path,
    port: int | None = None,
    env: dict[str, str] | None = None,
    extra_graphs: dict[str, str] | None = None,
) -> AbstractContextManager[DevServer]:
    return langgraph_dev(
        root / "work",
        root / "data",
        port=port,
        env={**SERVER_ENV, **(env or {})},
        extra_graphs={**GRAPHS, **(extra_graphs or {})},
    )


def page_url(site: str, api: str, hook: str, transport: str) -> str:
    return f"{site}/{PAGE}?api={api}&hook={hook}&transport={transport}"


async def open_page(page: Page, url: str) -> None:
    await page.goto(url)
    await page.wait_for_function("() => window.chat !== undefined")


def question() -> str:
    return f"Browser question {next(_questions):04d}: which control group fits?"


async def run_scenario(
    browser: Browser,
    site: str,
    api: DevServer,
    scenario: Scenario,
    hook: str,
    transport: str,
    stream_bytes: int,
    late_wait_s: float = 0.0,
    linger_s: float = 0.0,
) -> Outcome | None:
    """Open the page through a proxy with the scenario's fault; ask ``turns`` questions;
    then keep the page open ``linger_s`` more, counting the event streams it opens
    meanwhile. None when the fault has no place on ``transport``."""
    fault = scenario.fault(stream_bytes, transport)
    if fault is None:
        return None
    context = await browser.new_context()
    proxy = await ProtocolProxy(api.port, fault).start()
    try:
        page = await context.new_page()
        timeline = PageTimeline(page)
        await open_page(page, page_url(site, proxy.url, hook, transport))
        shown: list[Shown] = []
        for _ in range(scenario.turns):
            runs_before = sum(run.runs for run in shown)
            await page.evaluate(SUBMIT, question())
            shown.append(
                await shown_after_run(
                    page,
                    api.url,
                    runs_before,
                    reload_after_s=scenario.reload_after_s,
                    late_wait_s=late_wait_s,
                )
            )
        before = proxy.stats.faulted
        await asyncio.sleep(linger_s)
        texts = await texts_shown(page)
        return Outcome(shown, proxy, proxy.stats.faulted - before, timeline, texts)
    finally:
        await context.close()
        await proxy.stop()


# Some of the answer, but not all: the route has nothing of it before the run's end (its
# message is written with the node's last checkpoint), so only the page can tell.
ANSWER_STREAMING = 40  # characters


async def answer_streaming(page: Page) -> None:
    """Until the page shows some of its latest turn's answer (so a restart lands mid-answer,
    while the run still runs)."""
    await page.wait_for_function(
        "n => (window.answers().at(-1) ?? '').length >= n", arg=ANSWER_STREAMING, timeout=30_000
    )


async def healthy_stream_bytes(
    browser: Browser, site: str, api: DevServer, transports: tuple[str, ...] = TRANSPORTS
) -> dict[str, int]:
    """Bytes of one healthy run's longest event stream, per transport, to place faults."""
    sizes = {}
    for transport in transports:
        outcome = await run_scenario(
            browser, site, api, SCENARIOS["no fault"], "bare", transport, 0
        )
        assert outcome is not None and outcome.shown[0].exact, outcome
        sizes[transport] = max(outcome.proxy.stats.downstream_bytes)
    return sizes


async def restart_mid_run(
    browser: Browser,
    root: Path,
    url_of: Callable[[str], str],
    env: dict[str, str] | None = None,
) -> Shown:
    """One slow question on the page at ``url_of(api)``; mid-answer the server is killed
    (SIGKILL: its event buffer and streams gone) and started again on its port and data,
    where the run goes on (``around_a_restart``). What the page shows after the run's
    end, as ``shown_after_run`` reads it, the run's end being the restarted server's."""
    return await around_a_restart(browser, root, url_of, _shown_after_restart, env)


async def around_a_restart(
    browser: Browser,
    root: Path,
    url_of: Callable[[str], str],
    read: Callable[[Page, str, str, str], Awaitable[T]],
    env: dict[str, str] | None = None,
) -> T:
    """The page at ``url_of(api)`` asks the paced agent a slow question; mid-answer, once
    the server has written the run to disk (so that it outlives the crash and is run
    again), the server is killed and started again on its port and data; then
    ``read(page, api_url, thread_id, run_id)`` on the restarted server."""
    port = free_port()
    context = await browser.new_context()
    proxy = await ProtocolProxy(port, Fault()).start()
    try:
        page = await context.new_page()
        with server(root, port, env) as first:
            await open_page(page, f"{url_of(proxy.url)}&assistant={SLOW_GRAPH}")
            await watch_first_shown(page)
            await page.evaluate(SUBMIT, f"{question()} {SLOWER}")
            thread_id = await thread_of(page)
            run_id = await nth_run(first.url, thread_id, 1)
            await answer_streaming(page)
            await runs_written(first)
            status = await run_status(first.url, thread_id, run_id)
            assert status == "running", f"the run was {status} before the restart"
            await asyncio.to_thread(stop, first.process, signal.SIGKILL)
        with server(root, port, env) as second:
            return await read(page, second.url, thread_id, run_id)
    finally:
        await context.close()
        await proxy.stop()


async def _shown_after_restart(page: Page, api: str, thread_id: str, run_id: str) -> Shown:
    ended, expected, message_id = await run_end(api, thread_id, run_id)
    delay = await _shown_within(page, message_id, expected, ended, SHOW_WITHIN_S)
    await asyncio.sleep(max(0.0, ended + SHOW_WITHIN_S - time.monotonic()))
    answer = await page.evaluate(ANSWER_OF, [message_id])
    body = await page.inner_text("#chat")
    tool_calls = await page.locator(".tool-call").count()
    state = await page.evaluate(
        "() => JSON.stringify(document.querySelector('#chat')?.dataset ?? {})"
    )
    # A SIGKILL may lose the server's thread record (langgraph dev keeps it in memory,
    # flushed now and then); the checkpoints the route reads stay.
    runs = max(1, len(await runs_of(api, thread_id)))
    if delay is None:
        delay = await _shown_within(page, message_id, expected, ended, 10)
    return Shown(
        expected, answer, body, tool_calls, delay, thread_id, run_id, state, runs, message_id
    )
