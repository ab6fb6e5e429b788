"""The route's errors, one row each: the exception behind it, its HTTP status, ``code``,
message, ``retryable`` flag and log level. The route answers from these rows and the
OpenAPI document lists them; clients/js/src/route/errors.js is the JS route's twin."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from starlette.responses import Response

from evoscientist_final_answer.answer.run_liveness import RunNotFound
from evoscientist_final_answer.http.params import InvalidRequest
from evoscientist_final_answer.http.responses import error_response
from evoscientist_final_answer.settings import SettingError
from evoscientist_final_answer.store.errors import (
    CallerUnauthorized,
    CheckpointUnreadable,
    StoreDamaged,
    StoreUnavailable,
    ThreadNotFound,
)


class MethodNotAllowed(Exception):
    """A method the read-only route refuses (any but GET and HEAD); its text is the method."""


@dataclass(frozen=True)
class RouteError:
    exception: type[Exception]
    status: int
    code: str
    # ``message`` and ``log`` are ``str.format`` templates over ``exc`` (the exception),
    # ``thread_id`` and ``run_id``. The message is what the client reads: no internals.
    message: str
    retryable: bool
    # What the OpenAPI document says of it.
    when: str
    # The server log's line for it, at ``log_level``; None: a normal answer, not logged.
    log_level: int | None = None
    log: str = ""

    def response(self, exc: Exception, thread_id: str | None, run_id: str | None) -> Response:
        message = self.message.format(exc=exc, thread_id=thread_id, run_id=run_id)
        return error_response(self.status, self.code, message, retryable=self.retryable)

    def log_line(self, exc: Exception, thread_id: str | None, run_id: str | None) -> str:
        return self.log.format(exc=exc, thread_id=thread_id, run_id=run_id)


# The first row whose exception matches answers, so a subclass comes before its base
# (StoreDamaged and CheckpointUnreadable are StoreUnavailables).
ROUTE_ERRORS: tuple[RouteError, ...] = (
    RouteError(
        exception=MethodNotAllowed,
        status=405,
        code="method_not_allowed",
        message="{exc} is not allowed here; use GET or HEAD",
        retryable=False,
        when="use GET or HEAD",
    ),
    RouteError(
        exception=InvalidRequest,
        status=422,
        code="invalid_request",
        message="{exc}",
        retryable=False,
        when="a malformed thread id or parameter",
    ),
    RouteError(
        exception=ThreadNotFound,
        status=404,
        code="thread_not_found",
        message="thread {thread_id!r} not found",
        retryable=False,
        when="no checkpoint of this agent (or user) for the thread",
    ),
    RouteError(
        exception=RunNotFound,
        status=404,
        code="run_not_found",
        message="run {run_id!r} not found on thread {thread_id!r}",
        retryable=False,
        when=(
            "inside the server, a run_id this server does not know on the thread and that "
            "no checkpoint carries; anywhere, a run that was deleted (rolled back) on any "
            "server sharing the store"
        ),
    ),
    RouteError(
        exception=CallerUnauthorized,
        status=401,
        code="unauthorized",
        message="{exc}",
        retryable=False,
        when=(
            "the standalone app as a sidecar (EVOSCIENTIST_READ_FROM=api) passed the "
            "caller's credentials on, and the server it reads refused them"
        ),
    ),
    RouteError(
        exception=StoreDamaged,
        status=503,
        code="store_damaged",
        message="the session store is damaged (not a database, or corrupt); see the server log",
        retryable=False,
        when="the store file is not a database or is corrupt",
        log_level=logging.ERROR,
        log="thread {thread_id}: the store is damaged: {exc}",
    ),
    RouteError(
        exception=CheckpointUnreadable,
        status=503,
        code="checkpoint_unreadable",
        message="the thread's newest checkpoint cannot be decoded; see the server log",
        retryable=False,
        when="the stored checkpoint cannot be decoded",
        # One line naming the thread and the cause; the client gets the code alone.
        log_level=logging.ERROR,
        log="thread {thread_id}: checkpoint unreadable: {exc}",
    ),
    RouteError(
        exception=StoreUnavailable,
        status=503,
        code="store_unavailable",
        message="the session store could not be read; retry shortly",
        retryable=True,
        when=(
            "the store could not be read in time, or the fallback API answered something "
            "that is not a thread state"
        ),
        log_level=logging.WARNING,
        log="thread {thread_id}: no store could answer: {exc}",
    ),
    RouteError(
        exception=SettingError,
        status=503,
        code="misconfigured",
        message="{exc}",
        retryable=False,
        when=(
            "a setting of the route's cannot be used; the message names the variable and "
            "what it accepts"
        ),
        # No log line per request: ``loop_services`` logs each bad value once.
    ),
)

# Every exception the table answers, for an ``except`` clause.
ROUTE_EXCEPTIONS: tuple[type[Exception], ...] = tuple(row.exception for row in ROUTE_ERRORS)


def error_row(exc: Exception) -> RouteError:
    """The row that answers ``exc`` (one of ``ROUTE_EXCEPTIONS``)."""
    for row in ROUTE_ERRORS:
        if isinstance(exc, row.exception):
            return row
    raise LookupError(f"no error row answers {type(exc).__name__}")
