"""Routes ``langgraph dev`` mounts beside its API through ``langgraph.json``'s ``http.app``.

Also runs on its own: ``uvicorn EvoScientist.langgraph_dev.http:app`` serves
``sessions.db`` directly (set ``EVOSCIENTIST_LANGGRAPH_URL`` to add the API fallback).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from EvoScientist.langgraph_dev.params import InvalidRequest, parse_query
from EvoScientist.langgraph_dev.responses import (
    answer_etag,
    error_response,
    etag_matches,
    json_answer,
    not_modified,
    text_answer,
)
from EvoScientist.langgraph_dev.service import FinalAnswerService
from EvoScientist.models import models_payload
from EvoScientist.store.errors import StoreUnavailable, ThreadNotFound

logger = logging.getLogger(__name__)

ServiceFactory = Callable[[], FinalAnswerService]


async def get_models(request: Request) -> Response:
    return JSONResponse(models_payload())


def _service(request: Request) -> FinalAnswerService:
    state = request.app.state
    if getattr(state, "final_answer_service", None) is None:
        # Built on first use, not at import: langgraph dev imports this module before
        # its own server (and the in-process SDK transport) exists.
        state.final_answer_service = state.service_factory()
    return state.final_answer_service


async def get_final_answer(request: Request) -> Response:
    try:
        query = parse_query(request.path_params["thread_id"], request.query_params)
    except InvalidRequest as exc:
        return error_response(422, "invalid_request", str(exc), retryable=False)

    representation = f"{query.format}{'+reasoning' if query.include_reasoning else ''}"
    if_none_match = request.headers.get("if-none-match")
    service = _service(request)
    try:
        if query.wait:
            answer = await service.wait(
                query.thread_id,
                query.run_id,
                query.wait,
                changed=lambda a: (
                    bool(if_none_match)
                    and not etag_matches(if_none_match, answer_etag(a, representation))
                ),
            )
        else:
            answer = await service.read(query.thread_id, query.run_id)
    except ThreadNotFound:
        return error_response(
            404, "thread_not_found", f"thread {query.thread_id!r} not found", retryable=False
        )
    except StoreUnavailable as exc:
        logger.warning("thread %s: no store could answer: %s", query.thread_id, exc)
        return error_response(
            503,
            "store_unavailable",
            "the session store could not be read; retry shortly",
            retryable=True,
        )

    etag = answer_etag(answer, representation)
    if etag_matches(if_none_match, etag):
        return not_modified(etag)
    if query.format == "text":
        return text_answer(answer, etag)
    return json_answer(answer, etag, include_reasoning=query.include_reasoning)


def create_app(service_factory: ServiceFactory = FinalAnswerService.from_environment) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        service = getattr(app.state, "final_answer_service", None)
        if service is not None:
            await service.close()

    app = Starlette(
        routes=[
            Route("/api/models", get_models, methods=["GET"]),
            # ``:path`` so an id with an encoded ``/`` reaches validation (a 422 in the
            # documented shape) instead of missing the route (a bare 404 that a client
            # would read as "route absent").
            Route("/api/threads/{thread_id:path}/final-answer", get_final_answer, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.service_factory = service_factory
    app.state.final_answer_service = None
    return app


app = create_app()
