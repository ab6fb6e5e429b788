"""``stream_with_recovery``: stream a run, then make the shown text the checkpoint's."""

from __future__ import annotations

import asyncio
import logging
import uuid
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import LangGraphError, NotFoundError

from evoscientist_final_answer.recovery.once import (
    REQUEST_ID_KEY,
    ExactlyOnceTransport,
    ResubmitCallback,
)
from evoscientist_final_answer.recovery.reconcile import Reconciler, backoff
from evoscientist_final_answer.recovery.stream_text import StreamText

logger = logging.getLogger(__name__)

DEFAULT_MAX_WAIT = 240.0
# No byte for this long (the server's SSE heartbeat comes every 5 s) means a stall.
DEFAULT_STALL_TIMEOUT = 15.0
STREAM_MODE = "messages-tuple"
NO_REPLAY_WARNING = "Reconnecting without a Last-Event-ID"
FIND_RUN_ATTEMPTS = 5

TextCallback = Callable[[str], None]


def _timeout(read: float) -> httpx.Timeout:
    return httpx.Timeout(connect=5.0, read=read, write=30.0, pool=5.0)


async def find_run(
    url: str, thread_id: str, request_id: str, headers: Mapping[str, str] | None
) -> str | None:
    """The id of the run tagged with ``request_id``, when the stream died before naming it."""
    for attempt in range(FIND_RUN_ATTEMPTS):
        client = get_client(url=url, api_key=None, headers=headers, timeout=_timeout(10.0))
        try:
            for run in await client.runs.list(thread_id, limit=20):
                if (run.get("metadata") or {}).get(REQUEST_ID_KEY) == request_id:
                    return run["run_id"]
            return None
        except NotFoundError:
            return None
        except (httpx.TransportError, LangGraphError):
            await asyncio.sleep(backoff(attempt))
        finally:
            await client.aclose()
    return None


def submit_client(
    url: str,
    headers: Mapping[str, str] | None,
    timeout: httpx.Timeout,
    on_resubmit: ResubmitCallback | None = None,
) -> LangGraphClient:
    """``get_client``'s client, on a transport that sends each tagged submit once."""
    transport = ExactlyOnceTransport(httpx.AsyncHTTPTransport(retries=5), on_resubmit=on_resubmit)
    http = httpx.AsyncClient(
        base_url=url,
        transport=transport,
        timeout=timeout,
        headers={"User-Agent": "evoscientist-recovery", **dict(headers or {})},
    )
    return LangGraphClient(http)


def _replace_shown(show: TextCallback, body: Mapping[str, Any]) -> None:
    """Replace, never append; but an answer not written yet must not blank the stream's text."""
    if body.get("content") or body.get("complete"):
        show(body.get("content", ""))


async def stream_with_recovery(
    url: str,
    thread_id: str,
    assistant_id: str,
    input: Mapping[str, Any] | None,
    *,
    max_wait: float = DEFAULT_MAX_WAIT,
    on_update: TextCallback | None = None,
    stall_timeout: float = DEFAULT_STALL_TIMEOUT,
    headers: Mapping[str, str] | None = None,
    stream_resumable: bool = True,
    on_reconcile: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Stream a run and return its authoritative final answer.

    ``on_update(text)`` gets the answer text as it grows (reasoning excluded), and again
    whenever the route replaces it; ``on_reconcile()`` is called once the stream has
    ended and the route is being asked. The result is the route's final-answer body plus
    ``recovered`` (the route's text replaced what the stream showed), ``truncated``
    (the stream ended without proof of completion) and ``stream_error``.
    """
    shown = ""

    def show(text: str) -> None:
        nonlocal shown
        if text != shown:
            shown = text
            if on_update is not None:
                on_update(text)

    stream = StreamText()
    created_run_id: str | None = None
    # Tags the run so it can be found even if the response naming it never arrives.
    request_id = str(uuid.uuid4())

    def on_run_created(metadata: Mapping[str, Any]) -> None:
        nonlocal created_run_id
        created_run_id = metadata.get("run_id")

    resubmitted: str | None = None

    def on_resubmit(event: Mapping[str, Any]) -> None:
        nonlocal resubmitted
        run = event["run_id"]
        resubmitted = f"joined {run}" if event["action"] == "joined" else "posted again"
        logger.info("submit to thread %s cut before its response: %s", thread_id, resubmitted)

    client = submit_client(url, headers, _timeout(stall_timeout), on_resubmit)
    stream_error: BaseException | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            async for part in client.runs.stream(
                thread_id,
                assistant_id,
                input=dict(input) if input is not None else None,
                stream_mode=STREAM_MODE,
                stream_resumable=stream_resumable,
                on_run_created=on_run_created,
                metadata={REQUEST_ID_KEY: request_id},
            ):
                if stream.feed(part.event, part.data):
                    show(stream.text)
        except (httpx.HTTPError, LangGraphError, OSError) as exc:
            stream_error = exc
            logger.info("stream of thread %s ended with %s: %s", thread_id, type(exc).__name__, exc)
        finally:
            await client.aclose()
    resumed_without_replay = any(NO_REPLAY_WARNING in str(w.message) for w in caught)

    streamed_text = stream.text
    run_id = stream.run_id or created_run_id
    if run_id is None:
        run_id = await find_run(url, thread_id, request_id, headers)
        if run_id is None:
            # The run was never created: nothing to recover; the caller may retry.
            raise stream_error or RuntimeError("the server created no run")

    if on_reconcile is not None:
        on_reconcile()
    async with httpx.AsyncClient(base_url=url, headers=dict(headers or {})) as http:
        answer = await Reconciler(http, thread_id, run_id).settle(
            max_wait, on_answer=lambda body: _replace_shown(show, body)
        )
    # An ``error`` event proves an ending only if the run really failed; after a
    # server restart the resumed stream reports "Run not found" the same way (and the
    # route then says ``run_lost``: the run ended, the stream did not show its end).
    proved_end = stream.terminal_event == "end" or (
        stream.terminal_event == "error"
        and answer.get("status") == "error"
        and (answer.get("error") or {}).get("code") != "run_lost"
    )
    truncated = stream_error is not None or resumed_without_replay or not proved_end
    return {
        **answer,
        "recovered": answer.get("content", "") != streamed_text,
        "truncated": truncated,
        "stream_error": repr(stream_error) if stream_error is not None else None,
        "stream_terminal_event": stream.terminal_event,
        "stream_error_event": stream.error,
        "resubmitted": resubmitted,
    }
