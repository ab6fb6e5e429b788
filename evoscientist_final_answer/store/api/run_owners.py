"""Who started a thread's runs, for a thread with no checkpoint yet (issue 20 §5).

A user's own checkpoints say whose a thread is (``langgraph_auth_user_id`` in their
metadata); before its first run writes one, only the run records do: langgraph-api
puts the caller's identity in each run's ``config.configurable``. Without them, another
user's request on a thread whose run had just started was answered ``pending`` and
held until the first checkpoint (about a second) before its 404, while an unknown
id's 404 came at once: the thread's existence showed in the time taken.

Read from the in-memory runtime's run table inside ``langgraph dev``, else asked
through the API (``runs.list``); a run whose record hides its config (a server's
custom encryption) names no one.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import httpx
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from evoscientist_final_answer.store.api.calls import our_api_calls
from evoscientist_final_answer.store.api.reader import AUTH_USER_KEY, api_thread_id
from evoscientist_final_answer.store.api.runtime_status import runtime_table
from evoscientist_final_answer.store.errors import StoreUnavailable

# The newest runs looked at: a thread with no checkpoint has one run or a few queued.
RUNS_PAGE = 100


def runtime_run_owners(thread_id: str) -> set[str]:
    """The users who started the thread's runs, from the runtime's own run table;
    raises ``RuntimeUnavailable`` when there is no table to read."""
    runs = runtime_table("runs")
    try:
        key = UUID(thread_id)
    except ValueError:
        return set()  # the API holds only UUIDs
    return {owner for row in runs if row.get("thread_id") == key if (owner := _owner(row))}


async def api_run_owners(client: LangGraphClient, thread_id: str) -> set[str]:
    """The same, asked through the API."""
    if not api_thread_id(thread_id):
        return set()
    try:
        with our_api_calls():
            listed = await client.runs.list(thread_id, limit=RUNS_PAGE)
    except (NotFoundError, UnprocessableEntityError):
        return set()
    except (httpx.HTTPError, OSError) as exc:
        raise StoreUnavailable(f"langgraph API: {type(exc).__name__}: {exc}") from exc
    if not isinstance(listed, list):
        return set()
    return {owner for run in listed if (owner := _owner(run))}


def _owner(run: Any) -> str | None:
    try:
        owner = run["kwargs"]["config"]["configurable"][AUTH_USER_KEY]
    except (KeyError, TypeError):
        return None
    return owner if isinstance(owner, str) else None
