"""A thread stream that follows its run to the run's end: langgraph_sdk's
``AsyncThreadStream`` (the v2 protocol), the same interface and events, through cut
connections, outages and server restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
from langgraph_sdk._async.stream import AsyncThreadStream
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError
from langgraph_sdk.stream.subscription import matches_subscription

from evoscientist_final_answer.recovery.once import (
    LOOKUP_INTERVAL_SECONDS,
    LOOKUP_LIMIT,
    LOOKUP_WINDOW_SECONDS,
    REQUEST_ID_KEY,
    tagged_run,
)
from evoscientist_final_answer.recovery.thread.follow import Position, RunFollow, continues
from evoscientist_final_answer.recovery.thread.tail import tail_events
from evoscientist_final_answer.recovery.thread.watch import GIVE_UP_AFTER, RETRY_SECONDS, RunWatch

# How long a stream may go on after the route said its run is over (the JS package's
# STREAM_GRACE_MS): what it still brings in that time is shown, then it is left.
STREAM_GRACE_SECONDS = 0.3
_STREAM_ERRORS = (httpx.TransportError, httpx.HTTPStatusError)

Event = dict[str, Any]
OpenStream = Callable[[str], AsyncThreadStream]


class RecoveringThreadStream:
    """Use as the SDK's stream: ``async with``, ``run.start``, ``subscribe``; what it
    does not define is the SDK stream's (``interrupts``, ``run.respond``, …).

    The SDK re-opens a dropped stream a few times, then ``subscribe()`` just ends, as it
    does at the run's end; this stream tells the two apart by the run's root lifecycle
    event. Without it, it asks the final-answer route how the run stands (through an outage,
    for as long as ``give_up_after``): a run still going is followed on a re-opened stream
    from where the last one stopped, while the same server still holds its events; a run
    that ended, or whose server no longer holds them, is finished from the route's answer
    (``tail``). A run the server lost raises ``RunLost``; one that failed ends as the
    server ends a failed run."""

    def __init__(
        self,
        client: LangGraphClient,
        inner: AsyncThreadStream,
        open_stream: OpenStream,
        *,
        give_up_after: float = GIVE_UP_AFTER,
    ) -> None:
        self._client = client
        self._inner = inner
        self._open_stream = open_stream
        self._give_up_after = give_up_after
        self._follow = RunFollow()
        self.thread_id: str = inner.thread_id
        self.run = RecoveringRun(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> RecoveringThreadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._inner.__aexit__(*exc)

    async def close(self) -> None:
        await self._inner.close()

    def subscribe(
        self,
        channels: Sequence[str],
        *,
        namespaces: list[list[str]] | None = None,
        depth: int | None = None,
    ) -> AsyncIterator[Event]:
        """The run's events on ``channels``, to the run's end."""
        return self._subscribe(list(channels), namespaces, depth)

    def _watch(self) -> RunWatch:
        return RunWatch(
            self._client.http.client,
            self.thread_id,
            self._follow.run_id,
            give_up_after=self._give_up_after,
        )

    async def _subscribe(
        self, channels: list[str], namespaces: list[list[str]] | None, depth: int | None
    ) -> AsyncIterator[Event]:
        wanted: dict[str, Any] = {"channels": channels, "namespaces": namespaces, "depth": depth}
        # The run's end is told by its root lifecycle event, asked for whatever the caller asks.
        asked = channels if "lifecycle" in channels else [*channels, "lifecycle"]
        follow = self._follow
        seen: set[str] = set()
        resume: Position | None = None
        ended_at: asyncio.Task[dict[str, Any]] | None = None
        try:
            while True:
                source = self._inner.subscribe(asked, namespaces=namespaces, depth=depth)
                delivered = gap = False
                async for event in _until_over(source, ended_at):
                    if resume is not None and isinstance(event.get("seq"), int):
                        gap = not continues(event, resume)
                        resume = None
                        if gap:
                            break
                    event_id = event.get("event_id")
                    if isinstance(event_id, str):
                        if event_id in seen:
                            continue
                        seen.add(event_id)
                    delivered = True
                    if not follow.observe(event):
                        continue
                    if matches_subscription(event, wanted):  # type: ignore[arg-type]
                        yield event
                    if follow.ended:
                        return
                if not gap and ended_at is None and self._inner.interrupted:
                    return  # paused for input: the SDK ends a subscription so too
                # The stream ended short of the run's end.
                if ended_at is None:
                    now = await self._watch().read()
                    if now.get("complete"):
                        for event in self._tail(now, wanted):
                            yield event
                        return
                    ended_at = asyncio.create_task(self._watch().end())
                if gap or ended_at.done():
                    for event in self._tail(await ended_at, wanted):
                        yield event
                    return
                if not delivered:
                    await asyncio.sleep(RETRY_SECONDS)
                resume = follow.position
                await self._reopen(resume)
        finally:
            if ended_at is not None:
                ended_at.cancel()
                with contextlib.suppress(BaseException):
                    await ended_at

    def _tail(self, answer: dict[str, Any], wanted: dict[str, Any]) -> list[Event]:
        events = tail_events(self._follow, answer, int(time.time() * 1000))
        for event in events:
            self._follow.observe(event)
        return [event for event in events if matches_subscription(event, wanted)]  # type: ignore[arg-type]

    async def _reopen(self, resume: Position | None) -> None:
        """A new SDK stream on the thread in place of the spent one, asking the server
        for what follows the event before ``resume`` (``continues`` checks it)."""
        inner = self._open_stream(self.thread_id)
        await inner.__aenter__()
        if resume is not None:
            inner.observe_applied_through_seq(resume.seq - 1)
        spent, self._inner = self._inner, inner
        with contextlib.suppress(Exception):
            await spent.close()

    async def _started_run(self, request_id: str) -> str | None:
        """The run a ``run.start`` whose response was lost made, found by its tag: looked
        for through an outage, then for ``LOOKUP_WINDOW_SECONDS`` once the server answers."""
        out_of_reach_since: float | None = None
        listed_since: float | None = None
        while True:
            try:
                runs = await self._client.runs.list(self.thread_id, limit=LOOKUP_LIMIT)
            except NotFoundError:
                runs = []  # run.start creates the thread: it never arrived, or not yet
            except _STREAM_ERRORS:
                now = time.monotonic()
                out_of_reach_since = out_of_reach_since or now
                if now - out_of_reach_since >= self._give_up_after:
                    return None
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if (run_id := tagged_run(list(runs), request_id)) is not None:
                return run_id
            listed_since = listed_since or time.monotonic()
            if time.monotonic() - listed_since >= LOOKUP_WINDOW_SECONDS:
                return None
            await asyncio.sleep(LOOKUP_INTERVAL_SECONDS)


class RecoveringRun:
    """The stream's ``run``: ``start`` tags the run it asks for, so that a start whose
    response was lost finds its run instead of failing; the rest is the SDK's."""

    def __init__(self, owner: RecoveringThreadStream) -> None:
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner._inner.run, name)

    async def start(
        self, *, metadata: dict[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        owner = self._owner
        request_id = uuid.uuid4().hex
        tagged = {**(metadata or {}), REQUEST_ID_KEY: request_id}
        try:
            result = await owner._inner.run.start(metadata=tagged, **options)
        except httpx.TransportError:
            # The command may have reached the server: never start it twice.
            run_id = await owner._started_run(request_id)
            if run_id is None:
                raise
            result = {"run_id": run_id}
        owner._follow.run_id = result.get("run_id")
        return result


async def _until_over(
    source: AsyncIterator[Event], ended_at: asyncio.Task[dict[str, Any]] | None
) -> AsyncIterator[Event]:
    """``source``'s events until it ends or fails, or until ``STREAM_GRACE_SECONDS``
    after ``ended_at`` (the route's word that the run is over) is done."""
    it = source.__aiter__()
    try:
        if ended_at is None:
            while True:
                try:
                    event = await it.__anext__()
                except (StopAsyncIteration, *_STREAM_ERRORS):
                    return
                yield event
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        pending: asyncio.Future[Event] = asyncio.ensure_future(it.__anext__())
        try:
            while True:
                if deadline is None and ended_at.done():
                    deadline = loop.time() + STREAM_GRACE_SECONDS
                waits: set[asyncio.Future[Any]] = {pending} if deadline else {pending, ended_at}
                timeout = None if deadline is None else max(0.0, deadline - loop.time())
                done, _ = await asyncio.wait(
                    waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                if pending in done:
                    try:
                        event = pending.result()
                    except (StopAsyncIteration, *_STREAM_ERRORS):
                        return
                    yield event
                    pending = asyncio.ensure_future(it.__anext__())
                elif deadline is not None and loop.time() >= deadline:
                    return
        finally:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
    finally:
        with contextlib.suppress(Exception):
            await it.aclose()  # type: ignore[attr-defined]


class RecoveringThreads:
    """The client's ``threads``, whose ``stream`` recovers; the rest is the SDK's."""

    def __init__(self, client: LangGraphClient, give_up_after: float) -> None:
        self._client = client
        self._give_up_after = give_up_after

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client.threads, name)

    def stream(
        self, thread_id: str | None = None, *, assistant_id: str, **options: Any
    ) -> RecoveringThreadStream:
        """``client.threads.stream``, recovering."""
        threads = self._client.threads
        inner = threads.stream(thread_id, assistant_id=assistant_id, **options)

        def reopen(same_thread: str) -> AsyncThreadStream:
            return threads.stream(same_thread, assistant_id=assistant_id, **options)

        return RecoveringThreadStream(
            self._client, inner, reopen, give_up_after=self._give_up_after
        )


class RecoveringClient:
    """A ``LangGraphClient`` whose thread streams recover; everything else is the
    client's own."""

    def __init__(self, client: LangGraphClient, give_up_after: float = GIVE_UP_AFTER) -> None:
        self._client = client
        self.threads = RecoveringThreads(client, give_up_after)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def with_recovery(client: LangGraphClient, *, give_up_after: float = GIVE_UP_AFTER) -> Any:
    """``client``, whose ``threads.stream(...)`` follows each run to its end::

    stream = with_recovery(client).threads.stream(thread_id, assistant_id=...)
    """
    return RecoveringClient(client, give_up_after)
