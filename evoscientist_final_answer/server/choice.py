"""The one place that picks where the server's facts come from, once, when the service
is built (as ``httpx`` picks a transport): nothing else asks which it is."""

from __future__ import annotations

from evoscientist_final_answer import settings
from evoscientist_final_answer.server.api import ServerApi
from evoscientist_final_answer.server.fallback import FallbackApi
from evoscientist_final_answer.server.remote import RemoteServer
from evoscientist_final_answer.server.runtime import RuntimeTables
from evoscientist_final_answer.server.view import NoServer, ServerView
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.host_process import inside_langgraph_server, runtime_readable


def api_for_this_process(url: str | None) -> ApiAnswerReader | None:
    """The API to ask when there is a server to ask: this process (no URL needed), or
    the configured ``url``."""
    if url is None and not inside_langgraph_server():
        return None
    return ApiAnswerReader(url, sidecar=sidecar())


def sidecar() -> bool:
    """Standalone, reading only the configured server's API, as each caller."""
    return not inside_langgraph_server() and settings.read_from() == settings.READ_FROM_API


def server_view(api: ApiAnswerReader | None) -> ServerView:
    """The view of the server behind ``api`` from where this process runs:

    - no API: ``NoServer``;
    - outside a langgraph API server, reading it as each caller (a sidecar):
      ``RemoteServer``, the server that runs the threads;
    - outside a langgraph API server otherwise: ``FallbackApi``, the remote server at
      ``api.url``;
    - inside one, reaching itself (no URL) and serving from the in-memory runtime's
      tables: ``RuntimeTables``;
    - inside one otherwise: ``ServerApi``, through ``api``."""
    if api is None:
        return NoServer()
    if not inside_langgraph_server():
        return RemoteServer(api) if api.sidecar else FallbackApi(api)
    if api.url is None and runtime_readable():
        return RuntimeTables(api)
    return ServerApi(api)
