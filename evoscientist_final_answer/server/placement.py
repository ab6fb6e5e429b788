"""Where this process reads from, decided once when the service is built (as httpx picks
a transport): the one module that asks. Its ``Placement`` hands out the store, the API
reader and the server view; nothing else asks which place it is."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from evoscientist_final_answer import settings
from evoscientist_final_answer.server.api import ServerApi
from evoscientist_final_answer.server.fallback import FallbackApi
from evoscientist_final_answer.server.remote import RemoteServer
from evoscientist_final_answer.server.runtime import RuntimeTables
from evoscientist_final_answer.server.view import NoServer, ServerView
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.host import StoreAddress, environment_store, host_store
from evoscientist_final_answer.store.host_process import inside_langgraph_server, runtime_readable

StoreFinder = Callable[[], Awaitable[StoreAddress | None]]


@dataclass(frozen=True)
class Placement:
    """What this process reads through. ``store``: finds the store read directly (None:
    the API alone); ``api``: the server's API, for a checkpoint the store cannot give
    (None: no server to ask); ``server``: what the server knows of a thread;
    ``agent``: whose rows answer (None: every graph's)."""

    store: StoreFinder
    api: ApiAnswerReader | None
    server: ServerView
    agent: str | None

    @classmethod
    def of(
        cls,
        store: StoreFinder,
        api: ApiAnswerReader,
        view: Callable[[ApiAnswerReader], ServerView],
        agent: str | None,
    ) -> Placement:
        """A place with a server, seen through ``api`` as ``view`` sees it."""
        return cls(store, api, view(api), agent)


def this_process() -> Placement:
    """Where this process is, one line a place:

    - inside a langgraph API server (``EVOSCIENTIST_READ_FROM`` ignored: the route reads
      the store the server was configured with): the in-memory runtime's own tables
      when it serves from them and no URL is configured, else the server's API;
    - a sidecar (``EVOSCIENTIST_READ_FROM=api``): no store; the server at
      ``EVOSCIENTIST_LANGGRAPH_URL`` runs the threads, read as each caller;
    - standalone with a fallback (``EVOSCIENTIST_LANGGRAPH_URL``): the environment's
      store, that server's API behind it;
    - standalone: the environment's store alone."""
    url = settings.fallback_api_url()
    inside = inside_langgraph_server()
    agent = settings.agent_filter(inside)
    if inside and url is None and runtime_readable():
        return Placement.of(host_store, ApiAnswerReader(None), RuntimeTables, agent)
    if inside:
        return Placement.of(host_store, ApiAnswerReader(url), ServerApi, agent)
    if settings.read_from() == settings.READ_FROM_API:
        # Its answers are the state's alone: the server's runs judge them (RemoteServer).
        sidecar = ApiAnswerReader(url, as_caller=True, status_in_answer=False)
        return Placement.of(_no_store, sidecar, RemoteServer, agent)
    if url is not None:
        return Placement.of(_environment_store, ApiAnswerReader(url), FallbackApi, agent)
    return Placement(_environment_store, None, NoServer(), agent)


async def _environment_store() -> StoreAddress | None:
    return environment_store()


async def _no_store() -> StoreAddress | None:
    return None
