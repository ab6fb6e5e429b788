"""How a held request lets its poll send its response (``delivery``): rendered once per
representation, validator and origin for all of them, and written through the request's
own way out (``WayOut``), so no thousand tasks each build and send their own.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Hashable
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.types import Message, Scope, Send

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.params import FinalAnswerQuery
from evoscientist_final_answer.http.responses import answer_response

logger = logging.getLogger(__name__)

# The scope key holding a request's ``WayOut``: set by whichever of the front door and
# the route (``FinalAnswerRoute``) the request reaches first, and taken out by it.
WAY_OUT = "evoscientist.held.way_out"


@dataclass(frozen=True)
class WayOut:
    """How a held request's response leaves: ``send``, the one the host handed the
    route, or, through the front door, the socket's below the CORS headers: ``with_cors``
    adds them as the server's own middleware would, so that a poll answering a thousand
    requests from one origin runs that middleware once and sends each a copy of the same
    messages (``delivery``)."""

    send: Send
    cors: CORSMiddleware | None = None

    def with_cors(self, scope: Scope, send: Send) -> Send:
        if self.cors is None:
            return send
        return functools.partial(self.cors.send, send=send, request_headers=Headers(scope=scope))


class HeldResponse:
    """A held request's response, for its poll to send (``delivery.Respond``);
    ``sent`` once the poll has.

    Through the front door it goes straight to the socket; otherwise through the ``send``
    the host handed the route, so the host's own middleware sees it as it sees every other
    response. Either way each request sends messages of its own (``_own``: a copy of the
    rendered dicts and header lists, the bytes shared), since middleware may write into a
    message it is given (GZip its body, CORS its headers). Only the messages go out from
    the poll; the request's task, woken after the whole pass, finishes what the host does
    after a response."""

    def __init__(
        self,
        request: Request,
        query: FinalAnswerQuery,
        representation: str,
        if_none_match: str | None,
        way_out: WayOut,
    ) -> None:
        self.request = request
        self.query = query
        self.representation = representation
        self.if_none_match = if_none_match
        self.way_out = way_out
        self.send = way_out.send
        self.sent = False

    @classmethod
    def for_request(
        cls,
        request: Request,
        query: FinalAnswerQuery,
        representation: str,
        if_none_match: str | None,
    ) -> HeldResponse | None:
        """``None`` when the route was reached some other way than through
        ``FinalAnswerRoute`` (then the request sends its own response)."""
        way_out: WayOut | None = request.scope.get(WAY_OUT)
        if way_out is None:
            return None
        return cls(request, query, representation, if_none_match, way_out)

    def __call__(self, answer: FinalAnswer, rendered: dict[Hashable, Any]) -> Awaitable[None]:
        # ``sent`` as soon as the poll takes the request on, before any send: a
        # disconnect noticed from then on must not cancel the request (``routes``).
        self.sent = True
        return self._send(answer, rendered)

    async def _send(self, answer: FinalAnswer, rendered: dict[Hashable, Any]) -> None:
        # Everything of the request that the render reads. The method too: Starlette
        # renders a HEAD as a GET today (the server drops the body), and a HEAD must
        # not be sent a GET's messages should that change, nor a GET a HEAD's.
        key = (
            self.request.method,
            self.representation,
            self.if_none_match,
            self.way_out.cors is not None,
            self._origin(),
        )
        messages = rendered.get(key)
        if messages is None:
            messages = rendered[key] = await self._render(answer)
        for message in messages:
            await self.send(_own(message))

    async def complete(self) -> None:
        """End the response the poll sent, from the request's own task.

        The poll sends every body with ``more_body``: its ``Content-Length`` tells the
        client it has the whole response, but the server sees the response end only
        here. That end wakes whatever waits on the request (a pending receive, the
        host's middleware) and starts its cleanup, which the poll's pass leaves for
        afterwards instead of running between its sends."""
        try:
            await self.send(_own(END_OF_BODY))
        except Exception as exc:  # the client left meanwhile: nothing more to tell it
            logger.debug("a held response could not be ended: %r", exc)

    def _origin(self) -> str | None:
        # Through the host's stack its CORS middleware adds the headers to each
        # response: the origin does not change what is rendered.
        return self.request.headers.get("origin") if self.way_out.cors is not None else None

    async def _render(self, answer: FinalAnswer) -> list[Message]:
        messages: list[Message] = []

        async def record(message: Message) -> None:
            # Every body goes with ``more_body``: the request's own task ends it (``complete``).
            if message["type"] == "http.response.body":
                message = {**message, "more_body": True}
            messages.append(message)

        response = answer_response(answer, self.query, self.representation, self.if_none_match)
        out = self.way_out.with_cors(self.request.scope, record)
        await response(self.request.scope, self.request.receive, out)
        return messages


# What ends every held response; each request sends its own copy (``_own``).
END_OF_BODY: Message = {"type": "http.response.body", "body": b"", "more_body": False}


def _own(message: Message) -> Message:
    """A request's own copy of a shared message: whatever the middleware on its way
    writes into it (a body, headers) stays in this response."""
    copied = dict(message)
    if "headers" in copied:
        copied["headers"] = list(copied["headers"])
    return copied
