"""The demo server's custom routes (``langgraph.json``'s ``http.app``): its own
``/api/models`` and the final-answer route, adopted as upstream EvoScientist adopts it
(the import and ``*final_answer_routes(),`` first in the route list).

Its own middleware, as upstream has its own: the settings, the route's and the demo's,
checked before the server starts, so a bad value stops it with one line naming it
(``evoscientist_final_answer.http.startup``).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from EvoScientist import settings
from EvoScientist.models import models_payload
from evoscientist_final_answer import final_answer_routes
from evoscientist_final_answer.http.startup import SettingsCheck


async def get_models(request: Request) -> Response:
    return JSONResponse(models_payload())


def _build_app(check_settings: bool = True) -> Starlette:
    return Starlette(
        middleware=(
            [Middleware(SettingsCheck, validate=settings.validate)] if check_settings else []
        ),
        routes=[
            *final_answer_routes(),
            Route("/api/models", get_models, methods=["GET"]),
        ],
    )


app = _build_app()
# The same routes with no middleware at all, exactly as upstream's ``http.py`` has them:
# a bad setting then reaches the route, which answers ``misconfigured`` (tests).
routes_only_app = _build_app(check_settings=False)
