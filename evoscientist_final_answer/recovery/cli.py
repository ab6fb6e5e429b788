"""``evosci-answer`` / ``python -m evoscientist_final_answer.recovery``: ask, or show a
thread's answer; exit codes in ``EXIT_CODES`` (also in ``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import Any, TextIO

import httpx
from langgraph_sdk import get_client

from evoscientist_final_answer.recovery.client import (
    DEFAULT_MAX_WAIT,
    DEFAULT_STALL_TIMEOUT,
    stream_with_recovery,
)
from evoscientist_final_answer.recovery.reconcile import (
    Reconciler,
    RunGone,
    ThreadGone,
    Unrecoverable,
)

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_INCOMPLETE = 3
EXIT_UNREACHABLE = 4
URL_ENV = "EVOSCIENTIST_URL"
DEFAULT_URL = "http://127.0.0.1:2024"
DEFAULT_ASSISTANT = "EvoScientist"
DESCRIPTION = (
    "Ask the EvoScientist agent served by langgraph dev a question and print its final "
    "answer, recovered from the run's checkpoint if the stream drops; or print a "
    "thread's final answer."
)
EXIT_CODES = f"""exit codes:
  {EXIT_OK}  the answer is complete (printed on stdout)
  {EXIT_RUN_FAILED}  the run failed
  2  bad command line
  {EXIT_INCOMPLETE}  the run was still not complete when the wait ran out
     (the answer may be partial)
  {EXIT_UNREACHABLE}  the thread (or run) was not found, or the server could not be reached
     or refused the request
Anything but 0 prints one line on stderr saying why."""
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class LiveView:
    """Redraws the answer in place on a terminal; elsewhere prints only the final text."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = out.isatty()
        self.lines = 0
        self.text = ""
        self.status = ""

    def update(self, text: str) -> None:
        self.text = text
        if self.tty:
            self._draw()

    def set_status(self, status: str) -> None:
        self.status = status
        if self.tty:
            self._draw()

    def _draw(self) -> None:
        if self.lines:
            self.out.write(f"\x1b[{self.lines}F\x1b[J")
        body = self.text + (f"\n\x1b[2m{self.status}\x1b[0m" if self.status else "")
        self.out.write(body + "\n")
        self.out.flush()
        self.lines = body.count("\n") + 1

    def finish(self, text: str) -> None:
        self.text, self.status = text, ""
        if self.tty:
            self._draw()
        else:
            self.out.write(text + ("" if text.endswith("\n") else "\n"))
            self.out.flush()


async def _spin(view: LiveView, started: float) -> None:
    for frame in itertools.cycle(SPINNER):
        elapsed = time.monotonic() - started
        view.set_status(f"{frame} confirming the answer with the server… {elapsed:.1f}s")
        await asyncio.sleep(0.1)


def _exit_code(answer: dict[str, Any], err: TextIO) -> int:
    if answer.get("status") == "error":
        error = answer.get("error") or {}
        err.write(f"error: the run failed: {error.get('message', 'unknown error')}\n")
        return EXIT_RUN_FAILED
    if not answer.get("complete"):
        err.write(f"error: the run is still {answer.get('status')}; the answer may be partial\n")
        return EXIT_INCOMPLETE
    return EXIT_OK


async def ask(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    view = LiveView(out)
    thread_id = args.thread
    if thread_id is None:
        client = get_client(url=args.url, api_key=None)
        try:
            thread_id = (await client.threads.create())["thread_id"]
        finally:
            await client.aclose()
    # On stderr, so stdout stays the answer alone: ``show`` and ``--thread`` take it.
    err.write(f"thread: {thread_id}\n")
    err.flush()
    spinner: asyncio.Task[None] | None = None

    def start_spinner() -> None:
        nonlocal spinner
        if view.tty:
            spinner = asyncio.get_running_loop().create_task(_spin(view, time.monotonic()))

    try:
        answer = await stream_with_recovery(
            args.url,
            thread_id,
            args.assistant,
            {"messages": [{"role": "user", "content": args.question}]},
            max_wait=args.max_wait,
            on_update=view.update,
            stall_timeout=args.stall_timeout,
            on_reconcile=start_spinner,
        )
    finally:
        if spinner is not None:
            spinner.cancel()
    view.finish(answer.get("content", ""))
    if answer.get("recovered"):
        err.write("note: the stream dropped; the answer was recovered from the checkpoint\n")
    return _exit_code(answer, err)


async def show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    async with httpx.AsyncClient(base_url=args.url) as http:
        reconciler = Reconciler(http, args.thread_id, args.run_id)
        if args.wait:
            answer = await reconciler.settle(args.wait)
        else:
            answer = await reconciler.fetch()
    out.write(answer.get("content", "") + "\n")
    return _exit_code(answer, err)


def _wrap(text: str) -> str:
    # The raw formatter keeps the exit-code table's lines; prose is wrapped here.
    return textwrap.fill(text, 79)


def parser(prog: str = "evosci-answer") -> argparse.ArgumentParser:
    url_default = os.environ.get(URL_ENV, "").strip() or DEFAULT_URL
    url_help = f"the langgraph API's base URL (default: ${URL_ENV}, else {DEFAULT_URL})"
    common: dict[str, Any] = {
        "epilog": EXIT_CODES,
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }
    root = argparse.ArgumentParser(prog=prog, description=_wrap(DESCRIPTION), **common)
    commands = root.add_subparsers(dest="command", required=True, metavar="{ask,show}")

    ask_cmd = commands.add_parser(
        "ask",
        help="stream an answer, recovering it if the stream drops",
        description=_wrap(
            "Stream the agent's answer to QUESTION on stdout; the thread's id goes to "
            "stderr. If the stream drops, the answer is completed from the run's checkpoint."
        ),
        **common,
    )
    ask_cmd.add_argument("--url", default=url_default, help=url_help)
    ask_cmd.add_argument(
        "--assistant",
        default=DEFAULT_ASSISTANT,
        help="the assistant (graph) id to run (default: %(default)s)",
    )
    ask_cmd.add_argument(
        "--thread",
        metavar="THREAD_ID",
        help="continue this thread (default: a new one; either way its id is printed on stderr)",
    )
    ask_cmd.add_argument(
        "--max-wait",
        type=float,
        default=DEFAULT_MAX_WAIT,
        metavar="SECONDS",
        help="after the stream ends, follow the run this long at most until it settles "
        "(default: %(default)g seconds)",
    )
    ask_cmd.add_argument(
        "--stall-timeout",
        type=float,
        default=DEFAULT_STALL_TIMEOUT,
        metavar="SECONDS",
        help="treat the stream as dropped after this long without a byte; the server sends "
        "a heartbeat every 5 seconds (default: %(default)g seconds)",
    )
    ask_cmd.add_argument("question", help="the question to ask")

    show_cmd = commands.add_parser(
        "show",
        help="print a thread's final answer",
        description=_wrap(
            "Print the final answer of THREAD_ID's latest turn (or of one run) on stdout."
        ),
        **common,
    )
    show_cmd.add_argument("--url", default=url_default, help=url_help)
    show_cmd.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="follow a run still in progress this long at most until it settles "
        "(default: %(default)g seconds: answer at once)",
    )
    show_cmd.add_argument(
        "--run-id",
        metavar="RUN_ID",
        help="the answer of this run (default: the thread's latest turn)",
    )
    show_cmd.add_argument("thread_id", metavar="THREAD_ID", help="the thread, as ask printed it")
    return root


def main(
    argv: Sequence[str] | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    prog: str = "evosci-answer",
) -> int:
    args = parser(prog).parse_args(argv)
    command = ask if args.command == "ask" else show
    try:
        return asyncio.run(command(args, out, err))
    except RunGone as exc:
        err.write(f"error: {exc} not found on {args.url}\n")
    except ThreadGone as exc:
        err.write(f"error: thread {exc} not found on {args.url}\n")
    except httpx.HTTPStatusError as exc:
        detail = " ".join(exc.response.text[:200].split())
        err.write(f"error: {args.url} refused the request: {exc.response.status_code} {detail}\n")
    except (Unrecoverable, httpx.HTTPError, OSError) as exc:
        err.write(f"error: could not reach {args.url}: {exc}\n")
    except KeyboardInterrupt:
        err.write("error: interrupted\n")
    return EXIT_UNREACHABLE
