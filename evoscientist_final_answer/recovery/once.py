"""Exactly-once run submits: an httpx transport under ``langgraph_sdk``'s client, so a
submit cut before its response joins the run it made instead of making a second.
The JS package's ``exactlyOnceFetch`` (clients/js/src/core/once.js) does the same.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from typing import Any

import httpx

REQUEST_ID_KEY = "recovery_request_id"
LOOKUP_WINDOW_SECONDS = 2.0
LOOKUP_INTERVAL_SECONDS = 0.25
LOOKUP_LIMIT = 50
# Before a run's first event on either server: the Python one compares ids as text
# ("1712…-0" > "-1"), the JavaScript one as numbers (-1 + 1 = event 0), where "0-0" is NaN
# and replays nothing.
REPLAY_FROM_START = "-1"
SUBMIT_PATH = re.compile(r"^(.*)/threads/([^/]+)/runs/stream$")
DROPPED_HEADERS = ("content-type", "content-length", "accept", "last-event-id")

ResubmitCallback = Callable[[dict[str, Any]], None]


def tagged_run(runs: Any, request_id: str) -> str | None:
    """The oldest run (the server lists newest first) tagged with ``request_id``."""
    found = None
    for run in runs if isinstance(runs, list) else []:
        if isinstance(run, dict) and (run.get("metadata") or {}).get(REQUEST_ID_KEY) == request_id:
            found = str(run["run_id"])
    return found


class _Submit:
    def __init__(self, request: httpx.Request, body: dict[str, Any], thread_path: str) -> None:
        self.request = request
        self.body = body
        self.request_id: str = body["metadata"][REQUEST_ID_KEY]
        self.thread_url = request.url.copy_with(path=thread_path, query=None)
        self.resumable = body.get("stream_resumable") is True
        self.strategy = body.get("multitask_strategy")


def submit_of(request: httpx.Request) -> _Submit | None:
    """The submit ``request`` is, or None: any other request passes through."""
    if request.method != "POST":
        return None
    match = SUBMIT_PATH.match(request.url.path)
    if match is None:
        return None
    try:
        body = json.loads(request.content)
    except (ValueError, httpx.RequestNotRead):
        return None
    metadata = body.get("metadata") if isinstance(body, dict) else None
    request_id = metadata.get(REQUEST_ID_KEY) if isinstance(metadata, dict) else None
    if not isinstance(request_id, str) or not request_id:
        return None
    return _Submit(request, body, f"{match.group(1)}/threads/{match.group(2)}")


class ExactlyOnceTransport(httpx.AsyncBaseTransport):
    """Wraps ``inner`` so that a run submit tagged with a request id makes one run.

    A submit (``POST …/threads/{id}/runs/stream`` whose JSON body carries
    ``metadata.recovery_request_id``) whose send fails on the network is looked up by its
    request id over a short window and joined (``GET …/runs/{run_id}/stream``, replayed
    from its first event when resumable); only when no run shows up is it posted again,
    with ``multitask_strategy: "reject"``, and a 409 means the first POST's run appeared:
    it is joined. Every other request passes through.

    Nobody else re-sends a submit whose send failed: httpcore retries only connection
    errors before a byte is sent, and the SDK's stream loop re-GETs only the ``Location``
    a response gave it, so without this a cut before the response left the caller with no
    run id, and its retry made a second run."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        *,
        lookup_window: float = LOOKUP_WINDOW_SECONDS,
        lookup_interval: float = LOOKUP_INTERVAL_SECONDS,
        on_resubmit: ResubmitCallback | None = None,
    ) -> None:
        self.inner = inner
        self.lookup_window = lookup_window
        self.lookup_interval = lookup_interval
        self.on_resubmit = on_resubmit
        self._sent: dict[str, str | None] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        submit = submit_of(request)
        if submit is None:
            return await self.inner.handle_async_request(request)
        if submit.request_id in self._sent:
            return await self._resubmit(submit, None)
        self._sent[submit.request_id] = None
        try:
            return await self.inner.handle_async_request(request)
        except httpx.TransportError as exc:
            # The request may have reached the server (a connect failure would not have,
            # but httpcore has already retried those).
            return await self._resubmit(submit, exc)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _get(self, submit: _Submit, path: str, accept: str, **headers: str) -> httpx.Request:
        kept = {k: v for k, v in submit.request.headers.items() if k.lower() not in DROPPED_HEADERS}
        url = submit.thread_url.copy_with(path=submit.thread_url.path + path)
        return httpx.Request(
            "GET",
            url,
            headers={**kept, "accept": accept, **headers},
            extensions=submit.request.extensions,
        )

    async def _lookup(self, submit: _Submit) -> httpx.Response | str | None:
        """The run's id; None when not listed; the response when the lookup failed."""
        request = self._get(submit, "/runs", "application/json")
        request.url = request.url.copy_with(params={"limit": LOOKUP_LIMIT})
        response = await self.inner.handle_async_request(request)
        if response.status_code != 200:
            return response
        body = await response.aread()
        await response.aclose()
        try:
            runs = json.loads(body)
        except ValueError:
            return None  # read as "not listed": the rejecting post still guards the run
        return tagged_run(runs, submit.request_id)

    async def _joined(
        self, submit: _Submit, run_id: str, cause: BaseException | None
    ) -> httpx.Response:
        self._sent[submit.request_id] = run_id
        if self.on_resubmit is not None:
            self.on_resubmit(
                {
                    "request_id": submit.request_id,
                    "run_id": run_id,
                    "action": "joined",
                    "cause": cause,
                }
            )
        extra = {"last-event-id": REPLAY_FROM_START} if submit.resumable else {}
        request = self._get(submit, f"/runs/{run_id}/stream", "text/event-stream", **extra)
        return await self.inner.handle_async_request(request)

    def _posted(self, submit: _Submit, cause: BaseException | None) -> None:
        if self.on_resubmit is not None:
            self.on_resubmit(
                {
                    "request_id": submit.request_id,
                    "run_id": None,
                    "action": "posted",
                    "cause": cause,
                }
            )

    async def _resubmit(self, submit: _Submit, cause: BaseException | None) -> httpx.Response:
        if known := self._sent.get(submit.request_id):
            return await self._joined(submit, known, cause)
        # The first POST may still be on its way to becoming a run: look for it a while.
        started = time.monotonic()
        while True:
            found = await self._lookup(submit)
            if isinstance(found, httpx.Response):
                return found  # e.g. 404: the thread is gone
            if found is not None:
                return await self._joined(submit, found, cause)
            if time.monotonic() - started >= self.lookup_window:
                break
            await asyncio.sleep(self.lookup_interval)
        # Should the first POST still become a run, the server refuses this one: that run
        # is then in flight, and so found below.
        rejecting = dict(submit.body, multitask_strategy="reject")
        response = await self.inner.handle_async_request(_with_body(submit.request, rejecting))
        if response.status_code != 409:
            self._posted(submit, cause)
            return response
        found = await self._lookup(submit)
        if isinstance(found, str):
            await response.aclose()
            return await self._joined(submit, found, cause)
        # Another run holds the thread: the app's own strategy decides, as for a first submit.
        if submit.strategy == "reject":
            return response
        await response.aclose()
        self._posted(submit, cause)
        return await self.inner.handle_async_request(_with_body(submit.request, submit.body))


def _with_body(request: httpx.Request, body: dict[str, Any]) -> httpx.Request:
    headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
    return httpx.Request(
        request.method,
        request.url,
        headers=headers,
        content=json.dumps(body).encode(),
        extensions=request.extensions,
    )
