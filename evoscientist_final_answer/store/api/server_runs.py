"""What this langgraph server knows of a thread's runs, asked through ``langgraph_sdk``.

Inside ``langgraph dev`` the SDK's client reaches the same process in memory, so this
is a read of the server's own run table: which runs of the thread it holds and in what
status (``pending``/``running``/``success``/``error``/``timeout``/``interrupted``). The
in-memory runtime keeps that table across a clean restart but not across ``kill -9``
(it flushes to disk every 10 s): a run it does not know was never its own, or was lost.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpx
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from evoscientist_final_answer.answer.run_liveness import ServerRuns
from evoscientist_final_answer.store.api.calls import our_api_calls
from evoscientist_final_answer.store.api.reader import api_thread_id
from evoscientist_final_answer.store.errors import ApiInvalid, StoreUnavailable

# The newest runs of a thread read in one call; a run further back is asked for alone.
RUNS_PAGE = 100
_UNKNOWN = (NotFoundError, UnprocessableEntityError)


async def server_runs(
    client: LangGraphClient,
    thread_id: str,
    thread_status: str | None,
    wanted: Iterable[str | None] = (),
) -> ServerRuns:
    """The thread's status and its runs' statuses; ``wanted`` run ids are looked up
    one by one when the first page does not hold them."""
    if not api_thread_id(thread_id):
        return ServerRuns(thread_status)  # an id the API cannot hold has no runs there
    try:
        with our_api_calls():  # the route's own calls stay out of the server's log
            return ServerRuns(thread_status, await _runs(client, thread_id, wanted))
    except _UNKNOWN:
        return ServerRuns(thread_status)  # a thread this server does not know has no runs
    except (httpx.HTTPError, OSError) as exc:
        raise StoreUnavailable(f"langgraph API: {type(exc).__name__}: {exc}") from exc


async def _runs(
    client: LangGraphClient, thread_id: str, wanted: Iterable[str | None]
) -> dict[str, str]:
    listed = await client.runs.list(thread_id, limit=RUNS_PAGE, select=["run_id", "status"])
    if not isinstance(listed, list):
        raise ApiInvalid(f"the langgraph API listed runs as {type(listed).__name__}")
    runs = dict(_run_status(run) for run in listed)
    if len(listed) >= RUNS_PAGE:
        for run_id in {r for r in wanted if r is not None} - runs.keys():
            try:
                run = await client.runs.get(thread_id, run_id)
            except _UNKNOWN:
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
