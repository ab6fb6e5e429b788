"""A sidecar's view of the server it stands beside: that server runs the threads, so its
facts weigh as the server's own do inside it (``ServerApi``); but it is asked as each
caller, never as this process, so its auth decides what each caller reads."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from starlette.datastructures import Headers
from starlette.types import Scope

from evoscientist_final_answer.server.api import ServerApi
from evoscientist_final_answer.server.status_watch import StatusWatch
from evoscientist_final_answer.store.api.caller import as_caller


class RemoteServer(ServerApi):
    """A run it holds ``pending``/``running`` is alive however long it is silent, one it
    holds ``interrupted`` was cancelled, one it does not know was lost. Each request
    carries the caller's credentials (``store.api.caller``), and a long-poll runs as the
    caller who started it (keyed by those credentials). Nothing here is told of a
    change: a long-poll reads again every ``API_POLL_SECONDS``."""

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
