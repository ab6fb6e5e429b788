"""F2, F3 and F2a: ask the server for the authoritative answer until the run settles: the
route (long-polled where the server holds the request, else with backoff), or, on a
server without it, the thread's state read with the server's own extraction.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx

from evoscientist_final_answer.answer.result import pending_answer
from evoscientist_final_answer.answer.state import answer_from_state

BACKOFF_SECONDS = (1.0, 2.0, 4.0)
STEADY_BACKOFF_SECONDS = 5.0
# Between connects to a route that long-polled and whose server now refuses them.
RECONNECT_SECONDS = 0.5
LONG_POLL_SECONDS = 30.0
# Extra read time beyond ``wait`` before a held request counts as lost.
READ_MARGIN_SECONDS = 10.0

RETRYABLE_4XX = frozenset({408, 429})

AnswerCallback = Callable[[dict[str, Any]], None]


class ThreadGone(Exception):
    """The server answered that the thread does not exist: nothing to recover."""


class RunGone(ThreadGone):
    """The server answered that the run does not exist on the thread (``run_not_found``:
    a wrong id, or a run a restarted server forgot before it wrote anything)."""


class Unrecoverable(Exception):
    """No answer could be read before the deadline."""


def retryable_status(code: int) -> bool:
    """5xx, 408 and 429 may pass; any other 4xx (a bad run id, say) never will."""
    return code >= 500 or code in RETRYABLE_4XX


def backoff(attempt: int) -> float:
    return BACKOFF_SECONDS[attempt] if attempt < len(BACKOFF_SECONDS) else STEADY_BACKOFF_SECONDS


class Reconciler:
    """Reads one run's final answer from a server, by the route or by raw state.

    F2 asks ``GET /api/threads/{id}/final-answer`` for the streamed run; F3 repeats until
    ``complete`` (``wait=`` long-polls, else ``backoff``) up to a deadline. F2a, for
    servers without the route (a 404 whose body names neither ``thread_not_found`` nor
    ``run_not_found``), reads ``GET /threads/{id}/state`` (``answer_from_state``). Right
    after a cut the first request can itself fail on a pooled connection the cut killed:
    transport errors and 503s are retried, never fatal."""

    def __init__(self, http: httpx.AsyncClient, thread_id: str, run_id: str | None) -> None:
        self.http = http
        self.thread_id = thread_id
        self.run_id = run_id
        self._thread_path = f"/threads/{quote(thread_id, safe='')}"
        self.route_available: bool | None = None

    async def fetch(self, wait: float = 0.0) -> dict[str, Any]:
        """One read. Raises ``ThreadGone``, or ``httpx.HTTPError`` for retryable failures."""
        if self.route_available is not False:
            answer = await self._fetch_route(wait)
            if answer is not None:
                return answer
        return await self._fetch_state()

    async def _fetch_route(self, wait: float) -> dict[str, Any] | None:
        params: dict[str, Any] = {}
        if self.run_id:
            params["run_id"] = self.run_id
        if wait > 0:
            params["wait"] = f"{wait:g}"
        response = await self.http.get(
            f"/api{self._thread_path}/final-answer",
            params=params,
            timeout=httpx.Timeout(10.0, read=wait + READ_MARGIN_SECONDS),
        )
        if response.status_code == 404:
            code = _error_code(response)
            if code == "thread_not_found":
                raise ThreadGone(self.thread_id)
            if code == "run_not_found":
                self.route_available = True
                raise RunGone(f"run {self.run_id} of thread {self.thread_id}")
            self.route_available = False
            return None
        response.raise_for_status()
        self.route_available = True
        return response.json()

    async def _fetch_state(self) -> dict[str, Any]:
        thread = await self.http.get(self._thread_path)
        if thread.status_code in (404, 422):
            raise ThreadGone(self.thread_id)
        thread.raise_for_status()
        state = await self.http.get(f"{self._thread_path}/state")
        state.raise_for_status()
        body = state.json()
        status = thread.json().get("status")
        if self.run_id and (body.get("metadata") or {}).get("run_id") != self.run_id:
            # The state has not reached our run yet: its answer is not the one asked for.
            return pending_answer(self.thread_id, self.run_id, "api").to_json()
        return answer_from_state(self.thread_id, body, thread_status=status).to_json()

    async def settle(
        self, max_wait: float, on_answer: AnswerCallback | None = None
    ) -> dict[str, Any]:
        """Read until ``complete`` or ``max_wait`` seconds pass; the latest answer then."""
        deadline = time.monotonic() + max_wait
        latest: dict[str, Any] | None = None
        last_error: Exception | None = None
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            wait = min(LONG_POLL_SECONDS, max(remaining, 0.0)) if self.route_available else 0.0
            started = time.monotonic()
            probing = self.route_available is None
            try:
                latest = await self.fetch(wait)
                if on_answer is not None:
                    on_answer(latest)
                if latest.get("complete"):
                    return latest
            except httpx.HTTPStatusError as exc:
                if not retryable_status(exc.response.status_code):
                    raise
                last_error = exc
            except httpx.TransportError as exc:
                last_error = exc
            refused = isinstance(last_error, httpx.ConnectError) and self.route_available
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if latest is None:
                    raise Unrecoverable(f"no answer within {max_wait:g}s: {last_error}")
                return latest
            held = time.monotonic() - started
            if wait > 0 and held >= wait / 2 and last_error is None:
                continue  # the server long-polled for us: ask again at once
            if probing and self.route_available and last_error is None:
                # The first read only learnt that the route is there (it holds no request
                # before it knows): long-poll at once, or a run ending in a backoff's
                # second is seen up to that second late.
                continue
            if refused:
                # A server that long-polled and now refuses connections is restarting: a
                # refused connect costs it nothing, and a run ending in a 4 s backoff
                # would show 4 s late. Ask again soon, without backing off.
                await asyncio.sleep(min(RECONNECT_SECONDS, remaining))
                last_error = None
                continue
            await asyncio.sleep(min(backoff(attempt), remaining))
            attempt += 1
            last_error = None


def _error_code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("code") if isinstance(error, dict) else None
