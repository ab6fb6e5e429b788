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

from EvoScientist.answer.run_liveness import ServerRuns
from EvoScientist.store.errors import StoreUnavailable

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
    try:
        listed = await client.runs.list(thread_id, limit=RUNS_PAGE, select=["run_id", "status"])
        runs = {str(run["run_id"]): str(run["status"]) for run in listed}
        if len(listed) >= RUNS_PAGE:
            for run_id in {r for r in wanted if r is not None} - runs.keys():
                try:
                    run = await client.runs.get(thread_id, run_id)
                except _UNKNOWN:
                    continue
                runs[run_id] = str(run["status"])
    except _UNKNOWN:
        runs = {}  # a thread this server does not know has no runs here
    except (httpx.HTTPError, OSError) as exc:
        raise StoreUnavailable(f"langgraph API: {type(exc).__name__}: {exc}") from exc
    return ServerRuns(thread_status, runs)
