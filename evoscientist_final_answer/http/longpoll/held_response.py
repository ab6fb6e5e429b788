"""How a held request lets its poll send its response (``delivery``).

A poll that publishes the final answer sends the response of every request parked on
it, in one pass, instead of waking a thousand tasks that would each build and send
their own. Each request gives its poll a ``HeldResponse``: the response is rendered
once per representation, validator and origin for all of them, and written through
the request's own way out:

- through the front door (``front_door.DirectSend``, our complete app inside
  ``langgraph dev``): straight to the socket, with the CORS headers added once for
  every request that shares them;
- otherwise through the ``send`` the host handed the route (``FinalAnswerRoute``), so
  the host's own middleware (CORS, access log, a boundary of its own) sees each
  response as it sees every other.

Whichever way, every request sends messages of its own: a copy of the rendered ones
(the dicts and their header lists; the bytes are shared). Middleware may write into a
message it is given (GZip puts its compressed body and trailer there, CORS its
headers), and a message shared with another response would carry those writes into it.
Each response goes out in the context of the request it answers (``delivery``).

Only the messages go out from the poll; the request's task, woken after the whole
pass, finishes what the host does after a response (its logs, its cleanup).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Hashable
from typing import Any

from starlette.requests import Request
from starlette.types import Message, Send

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.longpoll.front_door import FRONT_DOOR_SEND, DirectSend
from evoscientist_final_answer.http.params import FinalAnswerQuery
from evoscientist_final_answer.http.responses import answer_response

logger = logging.getLogger(__name__)

# The scope key holding the ``send`` the host called the route with (``FinalAnswerRoute``).
ROUTE_SEND = "evoscientist.route.send"


class HeldResponse:
    """A held request's response, for its poll to send (``delivery.Respond``);
    ``sent`` once the poll has."""

    def __init__(
        self,
        request: Request,
        query: FinalAnswerQuery,
        representation: str,
        if_none_match: str | None,
        direct: DirectSend | None,
        send: Send,
    ) -> None:
        self.request = request
        self.query = query
        self.representation = representation
        self.if_none_match = if_none_match
        self.direct = direct
        self.send = send
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
        direct: DirectSend | None = request.scope.get(FRONT_DOOR_SEND)
        if direct is not None:
            return cls(request, query, representation, if_none_match, direct, direct.send)
        send: Send | None = request.scope.get(ROUTE_SEND)
        if send is None:
            return None
        return cls(request, query, representation, if_none_match, None, send)

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
            self.direct is not None,
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
        return self.request.headers.get("origin") if self.direct is not None else None

    async def _render(self, answer: FinalAnswer) -> list[Message]:
        messages: list[Message] = []

        async def record(message: Message) -> None:
            # Every body goes with ``more_body``: the request's own task ends it (``complete``).
            if message["type"] == "http.response.body":
                message = {**message, "more_body": True}
            messages.append(message)

        response = answer_response(answer, self.query, self.representation, self.if_none_match)
        out = self.direct.with_cors(self.request.scope, record) if self.direct else record
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
