"""The complete app, for a ``langgraph.json`` without an app of its own
(``"http": {"app": "evoscientist_final_answer.http.app:app"}``), or on its own under uvicorn.
It adds to ``final_answer_routes()`` what only an app of our own can: the start-up
settings check, the front door, garbage-collector tuning, and closing the service.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware

from evoscientist_final_answer.http.gc_tuning import tune_collector
from evoscientist_final_answer.http.longpoll.front_door import FrontDoor
from evoscientist_final_answer.http.loop_services import ServiceFactory
from evoscientist_final_answer.http.routes import FinalAnswerRoute, final_answer_routes
from evoscientist_final_answer.http.startup import SettingsCheck
from evoscientist_final_answer.store.host_process import inside_langgraph_server

logger = logging.getLogger(__name__)


def create_app(
    service_factory: ServiceFactory | None = None,
    *,
    validate: Callable[[], None] | None = None,
) -> Starlette:
    """``validate``: the settings check run at start-up (default: the route's settings)."""
    routes = final_answer_routes(service_factory)
    route = next(r for r in routes if isinstance(r, FinalAnswerRoute))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if inside_langgraph_server():  # the server has started: see gc_tuning.py
            frozen = tune_collector()
            logger.debug("collector tuned; %d objects of the started heap frozen", frozen)
        yield
        await route.services.close()

    app = Starlette(
        routes=routes,
        # Outermost inside langgraph dev: see front_door; the settings are checked
        # before anything starts (startup.py).
        middleware=[
            Middleware(SettingsCheck, validate=validate),
            Middleware(FrontDoor, route=route),
        ],
        lifespan=lifespan,
    )
    app.state.final_answer = route.services
    return app


app = create_app()
