"""Read a thread's final answer through the langgraph API with ``langgraph_sdk``: this
process's own API in memory (no URL: inside the server), or a configured server's. The
same client answers the server's status of threads (``thread_statuses``)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from typing import Any, TypeVar

import httpx
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import (
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    UnprocessableEntityError,
)

from evoscientist_final_answer.answer.result import FinalAnswer, pending_answer
from evoscientist_final_answer.answer.state import answer_from_state
from evoscientist_final_answer.store.api import shapes as api_shapes
from evoscientist_final_answer.store.api.caller import add_caller
from evoscientist_final_answer.store.api.calls import our_api_calls
from evoscientist_final_answer.store.api.in_process import in_process_client
from evoscientist_final_answer.store.errors import (
    ApiInvalid,
    CallerUnauthorized,
    StoreUnavailable,
    ThreadNotFound,
)

API_TIMEOUT_SECONDS = 10.0

# The API rejects ids it could never hold (it wants UUIDs; TUI sessions use 8-hex ids)
# with a 422, and a thread its auth keeps from the caller with a 403 (or a 404): for
# this route each is the same as an unknown thread.
UNKNOWN_THREAD = (NotFoundError, UnprocessableEntityError, PermissionDeniedError)
# Where langgraph-api records the authenticated user of a run in checkpoint metadata.
AUTH_USER_KEY = "langgraph_auth_user_id"
# Threads asked about in one status search.
SEARCH_CHUNK = 500

T = TypeVar("T")


def api_thread_id(thread_id: str) -> bool:
    """Whether the langgraph API could hold this id: it takes UUIDs only, and answers
    any other id (a TUI session's 8-hex id) with a 4xx that it logs as a warning."""
    try:
        uuid.UUID(thread_id)
    except ValueError:
        return False
    return True


async def _call(request: Awaitable[T]) -> T:
    """One API call, its failures as this module's errors: an unknown thread, an API
    that could not be reached, or one that answered something that is not JSON."""
    try:
        with our_api_calls():
            return await request
    except UNKNOWN_THREAD:
        raise
    except AuthenticationError as exc:
        raise CallerUnauthorized(api_error_message(exc)) from exc
    except (httpx.HTTPError, OSError) as exc:
        raise StoreUnavailable(f"langgraph API: {type(exc).__name__}: {exc}") from exc
    except (ValueError, TypeError) as exc:  # an HTML page, a body cut short
        raise ApiInvalid(f"the langgraph API answered no JSON: {type(exc).__name__}") from exc


def api_error_message(exc: httpx.HTTPStatusError) -> str:
    """What the API said, for passing on: its ``detail``, else its status line."""
    try:
        detail = exc.response.json().get("detail")
    except (ValueError, AttributeError, httpx.ResponseNotRead):
        detail = None
    if isinstance(detail, str) and detail:
        return f"the langgraph API refused the credentials: {detail}"
    return f"the langgraph API refused the credentials ({exc.response.status_code})"


class ApiAnswerReader:
    def __init__(
        self, url: str | None, *, as_caller: bool = False, status_in_answer: bool = True
    ) -> None:
        """``url``: the server's; None for this process's own API (inside the server).
        ``as_caller``: each request carries the caller's credentials (``caller``), not
        this process's own. ``status_in_answer``: an answer carries the server's status
        of the thread; else it is the state's alone, for the verdict to judge by the
        server's runs (where the status cannot tell a cancelled run from a crashed one:
        LangGraph's JS server writes no error for a cancelled task)."""
        self.url = url
        self.as_caller = as_caller
        self.status_in_answer = status_in_answer
        self._client: LangGraphClient | None = None

    @property
    def client(self) -> LangGraphClient:
        if self._client is None:
            if self.url is None:
                self._client = in_process_client(API_TIMEOUT_SECONDS)
            else:
                self._client = get_client(url=self.url, api_key=None, timeout=API_TIMEOUT_SECONDS)
                if self.as_caller:
                    self._client.http.client.event_hooks["request"].append(add_caller)
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def thread_status(self, thread_id: str) -> str | None:
        """The server's status of the thread, or None when it does not know the thread.

        A search selecting only the status: ``threads.get`` would also serialise the
        thread's values (its whole message list) on every poll.
        """
        return (await self.thread_statuses([thread_id])).get(thread_id)

    async def thread_statuses(self, thread_ids: list[str]) -> dict[str, str]:
        """The statuses of the threads the server knows among ``thread_ids``, in one
        search per ``SEARCH_CHUNK`` (ids it could not hold are not asked about)."""
        ids = [thread_id for thread_id in thread_ids if api_thread_id(thread_id)]
        found: dict[str, str] = {}
        for start in range(0, len(ids), SEARCH_CHUNK):
            chunk = ids[start : start + SEARCH_CHUNK]
            try:
                rows = await _call(
                    self.client.threads.search(
                        ids=chunk, select=["thread_id", "status"], limit=len(chunk)
                    )
                )
            except UNKNOWN_THREAD:
                continue
            found.update(api_shapes.thread_statuses(rows, chunk))
        return found

    async def read(
        self, thread_id: str, run_id: str | None = None, *, user_id: str | None = None
    ) -> FinalAnswer:
        """The answer through the API. With ``user_id``, a checkpoint whose metadata
        names another ``langgraph_auth_user_id`` (or none) is ``ThreadNotFound``, as on
        the direct path: the in-process client bypasses the server's auth."""
        status = await self.thread_status(thread_id)
        if status is None:
            raise ThreadNotFound(thread_id)
        try:
            if run_id is None:
                state: Any = api_shapes.thread_state(
                    await _call(self.client.threads.get_state(thread_id))
                )
            else:
                history = api_shapes.history(
                    await _call(
                        self.client.threads.get_history(
                            thread_id, limit=1, metadata={"run_id": run_id}
                        )
                    ),
                    limit=1,
                )
                if not history:
                    return pending_answer(thread_id, run_id, "api")
                state = history[0]
        except UNKNOWN_THREAD as exc:
            raise ThreadNotFound(thread_id) from exc
        if not state.get("checkpoint") or not state["checkpoint"].get("checkpoint_id"):
            # A thread with no checkpoint yet: its first run has not written anything.
            return pending_answer(thread_id, run_id, "api")
        if user_id is not None and (state.get("metadata") or {}).get(AUTH_USER_KEY) != user_id:
            raise ThreadNotFound(thread_id)
        return answer_from_state(
            thread_id, state, thread_status=status if self.status_in_answer else None
        )
