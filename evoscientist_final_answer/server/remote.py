"""Standalone as a sidecar (``EVOSCIENTIST_READ_FROM=api``): the server at
``EVOSCIENTIST_LANGGRAPH_URL`` runs the threads, and this process reads them through its
API alone, as each caller.

So its facts weigh as the server's own do inside it (``ServerApi``): a run it holds
``pending``/``running`` is alive however long it is silent, one it holds
``interrupted`` was cancelled, one it no longer knows was lost. But it is asked with
the caller's credentials (``store.api.caller``), never as itself: its auth decides what
each caller reads, and a long-poll runs as the caller who started it (keyed by those
credentials). Nothing here is told of a change: a long-poll reads again every
``API_POLL_SECONDS``.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from starlette.datastructures import Headers
from starlette.types import Scope

from evoscientist_final_answer.server.api import ServerApi
from evoscientist_final_answer.server.status_watch import StatusWatch
from evoscientist_final_answer.store.api.caller import as_caller


class RemoteServer(ServerApi):
    def caller_context(self, scope: Scope, headers: Headers) -> AbstractAsyncContextManager[Any]:
        return _as_caller(headers)

    def status_watch(self) -> StatusWatch | None:
        # A watch shared by every caller would ask as no one: a server with auth
        # refuses it. Each poll reads as its own caller instead.
        return None


@asynccontextmanager
async def _as_caller(headers: Headers) -> Any:
    with as_caller(headers.items()):
        yield
