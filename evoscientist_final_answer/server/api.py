"""Inside a langgraph API server, what it knows of a thread, asked through its API
(``langgraph_sdk``): the view of any runtime whose tables this process cannot read
(PostgreSQL-backed ``langgraph_runtime_postgres``), or of a server at a configured URL."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Hashable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import AuthenticationError
from starlette.datastructures import Headers
from starlette.types import Scope

from evoscientist_final_answer.server.status_watch import Lagging, StatusQuery, StatusWatch
from evoscientist_final_answer.server.view import ServerView
from evoscientist_final_answer.store.api.calls import our_api_calls
from evoscientist_final_answer.store.api.reader import (
    AUTH_USER_KEY,
    UNKNOWN_THREAD,
    ApiAnswerReader,
    api_error_message,
    api_thread_id,
)
from evoscientist_final_answer.store.errors import ApiInvalid, CallerUnauthorized, StoreUnavailable

logger = logging.getLogger(__name__)

# The newest runs of a thread read in one call; a run further back is asked for alone.
RUNS_PAGE = 100
# How often the waited-on threads' statuses are read: one search for all of them (a
# request through the server's stack); and, for the threads whose server lags their
# final checkpoint, how often, and how long one such wait lasts at most.
SERVER_STATUS_POLL_SECONDS = 2.0
CATCH_UP_POLL_SECONDS = 0.02


class ServerApi(ServerView):
    """The server this process is, asked through its API. In process the SDK's client
    reaches the same server, so these are reads of its own thread and run tables: a
    thread's status (``idle``/``busy``/``interrupted``/``error``), which runs of the
    thread it holds and in what status
    (``pending``/``running``/``success``/``error``/``timeout``/``interrupted``), and who
    started them. The in-memory runtime keeps its run table across a clean restart but
    not across ``kill -9`` (it flushes to disk every 10 s): a run it does not know was
    never its own, or was lost."""

    runs_here = True
    asks_as_caller = True

    def __init__(self, api: ApiAnswerReader) -> None:
        self.api = api
        self._watch: StatusWatch | None = None

    async def thread_status(self, thread_id: str) -> str | None:
        try:
            status = await self.api.thread_status(thread_id)
        except StoreUnavailable:
            logger.warning(
                "thread %s: server status unavailable; using the checkpoint alone", thread_id
            )
            return None
        self._observed(thread_id, status)
        return status

    async def runs(self, thread_id: str, writer_run_id: str | None) -> Mapping[str, str] | None:
        try:
            return await server_runs(self.api.client, thread_id, (writer_run_id,))
        except StoreUnavailable:
            logger.warning("thread %s: the server's runs unavailable", thread_id)
            return None

    async def run_owners(self, thread_id: str) -> set[str]:
        try:
            return await api_run_owners(self.api.client, thread_id)
        except StoreUnavailable:
            return set()  # nothing learnt: the API's own answer decides

    def caller_context(self, scope: Scope, headers: Headers) -> AbstractAsyncContextManager[Any]:
        """The server's in-process API calls skip its auth middleware, but its handlers
        read langgraph's auth context and apply the auth handler's own rules
        (``@auth.on.threads.read``): run them as the authenticated caller."""
        if "user" not in scope:
            return contextlib.nullcontext()
        try:
            from langgraph_api.utils import with_user
        except ImportError:  # pragma: no cover - another server version
            return contextlib.nullcontext()
        return with_user(scope.get("user"), scope.get("auth"))

    def status_watch(self) -> StatusWatch:
        if self._watch is None:
            self._watch = self._new_status_watch()
        return self._watch

    def _new_status_watch(self) -> StatusWatch:
        api = self.api

        async def through_api(thread_ids: list[str]) -> dict[str, Hashable]:
            # Shared by every caller's polls: asked as the server itself, not as
            # whichever caller started the watch (its task runs in a copy of that
            # caller's context). Only wakes polls; each then reads as its caller.
            _as_server()
            return dict(await api.thread_statuses(thread_ids))

        def catch_up(lagging: Lagging) -> StatusQuery:
            return through_api

        return StatusWatch(
            through_api,
            catch_up,
            status_every=SERVER_STATUS_POLL_SECONDS,
            catch_up_every=CATCH_UP_POLL_SECONDS,
            catch_up_signs_status=True,
            caught_up_cap=SERVER_STATUS_POLL_SECONDS,
        )

    def _observed(self, thread_id: str, status: str | None) -> None:
        """A read saw the thread's status: the watch's baseline, not a change."""
        if self._watch is not None:
            self._watch.remember(thread_id, status)

    async def close(self) -> None:
        if self._watch is not None:
            await self._watch.close()


async def server_runs(
    client: LangGraphClient, thread_id: str, wanted: Iterable[str | None] = ()
) -> dict[str, str]:
    """The thread's runs' statuses, oldest first; ``wanted`` run ids are looked up one
    by one when the first page does not hold them."""
    if not api_thread_id(thread_id):
        return {}  # an id the API cannot hold has no runs there
    try:
        with our_api_calls():  # the route's own calls stay out of the server's log
            return await _runs(client, thread_id, wanted)
    except UNKNOWN_THREAD:
        return {}  # a thread this server does not know has no runs
    except AuthenticationError as exc:
        raise CallerUnauthorized(api_error_message(exc)) from exc
    except (httpx.HTTPError, OSError) as exc:
        raise StoreUnavailable(f"langgraph API: {type(exc).__name__}: {exc}") from exc


async def _runs(
    client: LangGraphClient, thread_id: str, wanted: Iterable[str | None]
) -> dict[str, str]:
    listed = await client.runs.list(
        thread_id, limit=RUNS_PAGE, select=["run_id", "status", "created_at"]
    )
    if not isinstance(listed, list):
        raise ApiInvalid(f"the langgraph API listed runs as {type(listed).__name__}")
    # Oldest first, whatever order the server lists them in (Python's newest first,
    # JavaScript's as they were made).
    listed = sorted(
        listed, key=lambda run: str(run.get("created_at") or "") if isinstance(run, dict) else ""
    )
    runs = dict(_run_status(run) for run in listed)
    if len(listed) >= RUNS_PAGE:
        for run_id in {r for r in wanted if r is not None} - runs.keys():
            try:
                run = await client.runs.get(thread_id, run_id)
            except UNKNOWN_THREAD:
                continue
            runs.update((_run_status(run),))
    return runs


def _run_status(run: object) -> tuple[str, str]:
    """A run record's id and status, or ``ApiInvalid`` for anything else."""
    if isinstance(run, dict):
        run_id, status = run.get("run_id"), run.get("status")
        if isinstance(run_id, str) and isinstance(status, str):
            return run_id, status
    raise ApiInvalid("the langgraph API answered a run record without run_id and status")


async def api_run_owners(client: LangGraphClient, thread_id: str) -> set[str]:
    """The users who started the thread's runs, asked through the API (``runs.list``).

    A user's own checkpoints say whose a thread is (``langgraph_auth_user_id`` in their
    metadata); before its first run writes one, only the run records do: langgraph-api
    puts the caller's identity in each run's ``config.configurable``. So another user's
    request on a thread whose run has just started gets its 404 at once, as an unknown
    id does: the thread's existence does not show in the time taken. A run whose record
    hides its config (a server's custom encryption) names no one."""
    if not api_thread_id(thread_id):
        return set()
    try:
        with our_api_calls():
            listed = await client.runs.list(thread_id, limit=RUNS_PAGE)
    except UNKNOWN_THREAD:
        return set()
    except AuthenticationError as exc:
        raise CallerUnauthorized(api_error_message(exc)) from exc
    except (httpx.HTTPError, OSError) as exc:
        raise StoreUnavailable(f"langgraph API: {type(exc).__name__}: {exc}") from exc
    if not isinstance(listed, list):
        return set()
    return {owner for run in listed if (owner := run_owner(run))}


def run_owner(run: Any) -> str | None:
    """Who started a run, from its record (the API's or the runtime's own row)."""
    try:
        owner = run["kwargs"]["config"]["configurable"][AUTH_USER_KEY]
    except (KeyError, TypeError):
        return None
    return owner if isinstance(owner, str) else None


def _as_server() -> None:
    try:
        from langgraph_api.utils import set_auth_ctx
    except ImportError:  # pragma: no cover - another server version
        return
    set_auth_ctx(None, None)
