"""The route, for any host app: ``routes=[*final_answer_routes(), ...]``, first in the list
(it returns the route and its OpenAPI document only, so it shadows nothing of the host's).
The routes carry their own state, need no lifespan or middleware of ours and change nothing
global, so the host's middleware, CORS and auth apply to them as to its own routes.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable
from typing import Any

from starlette.authentication import UnauthenticatedUser
from starlette.convertors import Convertor
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from evoscientist_final_answer.http.errors import ROUTE_EXCEPTIONS, MethodNotAllowed, error_row
from evoscientist_final_answer.http.longpoll.held_response import WAY_OUT, HeldResponse, WayOut
from evoscientist_final_answer.http.loop_services import LoopServices, ServiceFactory
from evoscientist_final_answer.http.openapi import OPENAPI_PATH, openapi_document
from evoscientist_final_answer.http.params import FinalAnswerQuery, InvalidRequest, parse_query
from evoscientist_final_answer.http.responses import answer_etag, answer_response, etag_matches
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.settings import SettingError

logger = logging.getLogger(__name__)


class AnyTextConvertor(Convertor[str]):
    """``:path`` without its one gap: ``.`` does not match a newline, so an id holding
    one missed the route (a bare 404 a client reads as "route absent")."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


FINAL_ANSWER_PATH = "/api/threads/{thread_id}/final-answer"
# ``{thread_id:any_text}``, compiled here rather than through Starlette's global
# convertor table, which a host shares with us.
FINAL_ANSWER_REGEX = re.compile(r"^/api/threads/(?P<thread_id>[\s\S]*)/final-answer$")


async def get_openapi(request: Request) -> Response:
    return JSONResponse(openapi_document())


def authenticated_user_id(request: Request) -> str | None:
    """The caller's identity when langgraph's auth ran on this route
    (``http.enable_custom_route_auth``), as langgraph-api records it on the runs the
    caller starts (``langgraph_auth_user_id``: ``identity``, else ``display_name``);
    ``None`` when no auth is configured for the route."""
    user = request.scope.get("user")
    if user is None or isinstance(user, UnauthenticatedUser):
        return None  # no auth middleware, or langgraph's no-op auth
    for attribute in ("identity", "display_name"):
        try:
            value = getattr(user, attribute)
        except (NotImplementedError, AttributeError):
            continue
        if value is not None:
            return str(value)
    return ""  # authenticated, yet nameless: matches no run's user


# The route's methods. Inside langgraph dev a method a route lacks falls through to
# the server's own routes and ends in a bare 404, which a client reads as "route
# absent" (F2a); elsewhere Starlette answers it in plain text, with an ``Allow`` of
# its own. So the route matches every method (``OPTIONS``, ``TRACE``, ``PROPFIND``,
# any token) and refuses all but these itself, in the documented JSON. A CORS
# preflight never gets here: the host's CORS middleware answers it.
ROUTE_METHODS = ("GET", "HEAD")


# The access log's word for a request whose client left first (nginx's convention).
CLIENT_GONE_STATUS = 499


class ClientGone(Exception):
    """The client disconnected while its request was held."""


async def _disconnected(receive: Receive) -> None:
    """Return once the client has gone (the request's body, if any, is drained)."""
    try:
        while (await receive())["type"] != "http.disconnect":
            pass
    except Exception:  # a server that cannot receive any more has lost its client too
        return


async def until_client_gone(
    request: Request, work: Awaitable[Any], held: HeldResponse | None = None
) -> Any:
    """``work``'s result, or ``ClientGone`` as soon as the client disconnects: a held
    request then stops at once (no further reads) instead of at the end of its wait.

    ``work`` runs in this task; one more task waits for the disconnect and cancels it.
    ``held``: the request's response, for its poll to send (``held_response``); once
    the poll has taken it on (``sent``), the end of that response ends a pending receive
    too, and the work runs to its end, uncancelled, while the poll sends the other
    requests' responses."""
    current = asyncio.current_task()
    assert current is not None
    left = finished = False

    def on_disconnect(_: asyncio.Future[None]) -> None:
        # Scheduled when ``gone`` ended, it may run after the work has: then it is late.
        nonlocal left
        if not finished and not (held is not None and held.sent):
            left = True
            current.cancel()

    gone = asyncio.ensure_future(_disconnected(request.receive))
    gone.add_done_callback(on_disconnect)
    try:
        return await work
    except asyncio.CancelledError:
        if left and current.uncancel() == 0:
            raise ClientGone from None
        raise
    finally:
        finished = True
        gone.cancel()


def failure(exc: Exception, query: FinalAnswerQuery | None = None) -> Response:
    """The documented error for ``exc``: its row of ``errors.ROUTE_ERRORS``, logged as
    the row says."""
    row = error_row(exc)
    thread_id = query.thread_id if query is not None else None
    run_id = query.run_id if query is not None else None
    if row.log_level is not None:
        logger.log(row.log_level, row.log_line(exc, thread_id, run_id))
    return row.response(exc, thread_id, run_id)


async def get_final_answer(request: Request, service: FinalAnswerService) -> Response:
    if request.method not in ROUTE_METHODS:
        response = failure(MethodNotAllowed(request.method))
        response.headers["Allow"] = ", ".join(ROUTE_METHODS)
        return response
    try:
        query = parse_query(request.path_params["thread_id"], request.query_params)
    except InvalidRequest as exc:
        return failure(exc)

    representation = f"{query.format}{'+reasoning' if query.include_reasoning else ''}"
    if_none_match = request.headers.get("if-none-match")
    user_id = authenticated_user_id(request)
    held = (
        HeldResponse.for_request(request, query, representation, if_none_match)
        if query.wait
        else None
    )

    try:
        # The route's API calls run as the caller, where the server view asks as one.
        async with service.server.caller_context(request.scope, request.headers):
            if query.wait:
                answer = await until_client_gone(
                    request,
                    service.wait(
                        query.thread_id,
                        query.run_id,
                        query.wait,
                        changed=lambda a: (
                            bool(if_none_match)
                            and not etag_matches(if_none_match, answer_etag(a, representation))
                        ),
                        user_id=user_id,
                        respond=held,
                    ),
                    held,
                )
                if held is not None and held.sent:
                    await held.complete()
                    return ALREADY_SENT
            else:
                answer = await service.read(query.thread_id, query.run_id, user_id=user_id)
    except ClientGone:
        if held is not None and held.sent:
            return ALREADY_SENT  # gone after the poll sent its response
        # Nobody reads this; a status of its own keeps access logs truthful.
        return Response(status_code=CLIENT_GONE_STATUS)
    except ROUTE_EXCEPTIONS as exc:
        return failure(exc, query)

    return answer_response(answer, query, representation, if_none_match)


class AlreadySent(Response):
    """What the route returns for a request its poll has answered (``delivery``)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        return


ALREADY_SENT = AlreadySent()


class FinalAnswerRoute(Route):
    """The route, with its service (``services``) and its own path pattern: any text,
    even an encoded ``/`` or a newline, so every id reaches validation (a 422 in the
    documented shape) instead of missing the route (a bare 404 that a client would read
    as "route absent")."""

    def __init__(self, services: LoopServices) -> None:
        self.services = services
        super().__init__(
            FINAL_ANSWER_PATH,
            self.serve,
            name="final_answer",
        )
        # Every method (see ROUTE_METHODS); set here, as Starlette reads ``methods=None``
        # as GET alone for an endpoint that is a function.
        self.methods = None
        self.path_regex = FINAL_ANSWER_REGEX
        self.param_convertors = {"thread_id": AnyTextConvertor()}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The way out the host gave this request, for its poll to answer it
        # (``held_response``), unless the front door gave it its own.
        ours = WAY_OUT not in scope
        if ours:
            scope[WAY_OUT] = WayOut(send)
        try:
            await super().handle(scope, receive, send)
        finally:
            if ours:
                # The scope outlives the request in the server's cycle: no reference cycle.
                scope.pop(WAY_OUT, None)

    async def serve(self, request: Request) -> Response:
        try:
            service = await self.services.get()
        except SettingError as exc:  # logged once, by ``services``
            return failure(exc)
        return await get_final_answer(request, service)


def final_answer_routes(service_factory: ServiceFactory | None = None) -> list[BaseRoute]:
    """The route and its OpenAPI document, to put first in a host app's routes.

    ``service_factory``: what the route reads through; by default the store the host
    server was configured with, else the one the environment names
    (``FinalAnswerService.for_this_process``)."""
    return [
        Route(OPENAPI_PATH, get_openapi, methods=["GET"], include_in_schema=False),
        FinalAnswerRoute(LoopServices(service_factory)),
    ]
