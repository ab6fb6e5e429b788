"""The demo server's custom routes (``langgraph.json``'s ``http.app``): its own
``/api/models`` and the final-answer route, adopted as upstream EvoScientist adopts it
(the import and ``*final_answer_routes(),`` first in the route list).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from EvoScientist.models import models_payload
from evoscientist_final_answer import final_answer_routes


async def get_models(request: Request) -> Response:
    return JSONResponse(models_payload())


def _build_app() -> Starlette:
    return Starlette(
        routes=[
            *final_answer_routes(),
            Route("/api/models", get_models, methods=["GET"]),
        ]
    )


app = _build_app()
