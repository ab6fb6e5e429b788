"""What the server knows about a thread, as one interface wherever the route runs (one
implementation a place, picked once by ``server.placement``); and one read's facts of a
thread (``ThreadFacts``), each fetched when the verdict first needs it, and once."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from typing import Any

from starlette.datastructures import Headers
from starlette.types import Scope

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.run_liveness import (
    UNKNOWN,
    Ask,
    Evidence,
    Rules,
    Unknown,
    verdict,
)
from evoscientist_final_answer.server.status_watch import StatusWatch


class ServerView:
    """Four questions about a thread: its status, its runs, who started them, and
    whether a server holds it ``busy``; and a way for long-polls to wait for a status
    change (``status_watch``). The base knows nothing, as ``NoServer``. One subclass a
    place the route runs:

    - ``NoServer``: standalone with no API; nothing is known beside the checkpoint.
    - ``FallbackApi`` (``server.fallback``): standalone, with a remote API to fall back
      on; it runs no thread here, but vouches for a thread it holds ``busy``.
    - ``ServerApi`` (``server.api``): inside a langgraph API server, asking it through
      its API (in process; or at the configured URL).
    - ``RemoteServer`` (``server.remote``): a sidecar, asking the server it stands
      beside as each caller: that server runs the threads, and its auth decides.
    - ``RuntimeTables`` (``server.runtime``): inside ``langgraph dev``, reading the
      in-memory runtime's own tables (microseconds, where a request costs
      milliseconds).
    """

    # The facts are those of the server executing the thread's runs (the route runs
    # inside it): its status and runs outweigh what the checkpoint alone suggests.
    runs_here = False
    # Its questions are asked as the caller (inside the server: langgraph's auth rules
    # apply to the in-process API calls): a long-poll runs in its first caller's context.
    asks_as_caller = False

    def caller_context(self, scope: Scope, headers: Headers) -> AbstractAsyncContextManager[Any]:
        """Where the route's reads for one request run: as that caller, when this view
        asks as the caller (``asks_as_caller``); else nothing of the request's."""
        return contextlib.nullcontext()

    def facts(self, thread_id: str) -> ThreadFacts:
        """What this view knows of the thread, gathered for one read."""
        return ThreadFacts(self, thread_id)

    async def thread_status(self, thread_id: str) -> str | None:
        """The server's status of the thread (``idle``/``busy``/…), read before the
        checkpoint; None when not known (or not asked: a server not running it)."""
        return None

    async def runs(self, thread_id: str, writer_run_id: str | None) -> Mapping[str, str] | None:
        """The server's runs of the thread, run id → status, oldest first; None when it
        cannot say.
        ``writer_run_id``: the checkpoint's run, looked up alone if the list misses it."""
        return None

    async def run_owners(self, thread_id: str) -> set[str]:
        """The users who started the thread's runs (empty: nothing learnt)."""
        return set()

    async def busy_elsewhere(self, thread_id: str) -> bool:
        """A fallback API holds the thread ``busy``; False when there is none, or it
        cannot say."""
        return False

    def status_watch(self) -> StatusWatch | None:
        """What wakes a long-poll when the server's status of its thread moves; None
        when no status is watched."""
        return None

    async def close(self) -> None:
        pass


class NoServer(ServerView):
    """Standalone, with no API: the checkpoint and its silence are all there is."""


class ThreadFacts:
    """One read's facts of one thread: each fetched once, when first needed."""

    def __init__(self, view: ServerView, thread_id: str) -> None:
        self._view = view
        self._thread_id = thread_id
        self._status: str | Unknown | None = UNKNOWN
        self._runs: Mapping[str, str] | Unknown | None = UNKNOWN
        self._busy_elsewhere: bool | Unknown = UNKNOWN

    async def status(self) -> str | None:
        if self._status is UNKNOWN:
            self._status = await self._view.thread_status(self._thread_id)
        return self._status

    async def server_knows_thread(self) -> bool:
        """Whether a server may hold the thread before (or besides) the store: any
        fallback API may; the server running the thread only if it knows it."""
        if not self._view.runs_here:
            return True
        return await self.status() is not None

    async def started_by_others(self, user_id: str) -> bool:
        """Runs of the thread were started, none of them by ``user_id``."""
        owners = await self._view.run_owners(self._thread_id)
        return bool(owners) and user_id not in owners

    async def judged(
        self,
        read: Callable[[], Awaitable[FinalAnswer]],
        asked_run_id: str | None,
        rules: Rules,
    ) -> tuple[FinalAnswer, FinalAnswer]:
        """The checkpoint's answer from ``read`` (the store's or the API's), and its
        verdict.

        The server's runs are read after the checkpoint: a run that finished between
        the two reads would look stopped with work left. When the verdict ends a run the
        checkpoint does not, the checkpoint is read again, now newer than what the
        server said."""
        stored = await read()
        answer = await self.judge(stored, asked_run_id, rules)
        if answer.complete and not stored.complete:
            again = await read()
            if again != stored:
                stored, answer = again, await self.judge(again, asked_run_id, rules)
        return stored, answer

    async def held_elsewhere(
        self, user_id: str | None, stored_here: Callable[[], Awaitable[bool]]
    ) -> bool:
        """Whether a thread the store does not hold may still be read through the API:
        the server may know one whose first checkpoint is not written yet, or keep it in
        another store. Not another user's, though: that is answered as an unknown id is,
        at once, "not found" (``stored_here``: its checkpoints are here, none by this
        user; or it has none yet and its runs were all started by others)."""
        if not await self.server_knows_thread():
            return False
        return user_id is None or not (await stored_here() or await self.started_by_others(user_id))

    async def judge(
        self, answer: FinalAnswer, asked_run_id: str | None, rules: Rules
    ) -> FinalAnswer:
        """``verdict`` on ``answer``, given every fact it asks for."""
        while True:
            outcome = verdict(answer, asked_run_id, self._evidence(), rules)
            if not isinstance(outcome, Ask):
                return outcome
            if outcome is Ask.RUNS:
                self._runs = await self._view.runs(self._thread_id, answer.run_id)
            else:
                self._busy_elsewhere = await self._view.busy_elsewhere(self._thread_id)

    def _evidence(self) -> Evidence:
        return Evidence(
            runs_here=self._view.runs_here,
            now=datetime.now(UTC),
            thread_status=None if self._status is UNKNOWN else self._status,
            runs=self._runs,
            busy_elsewhere=self._busy_elsewhere,
        )
