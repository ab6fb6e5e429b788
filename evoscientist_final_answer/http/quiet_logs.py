"""Normal outcomes of the route log nothing above DEBUG inside ``langgraph dev`` (200, 304,
404, 422, and 499 for a held request whose client left), so nobody can flood the log
through the route.
"""

from __future__ import annotations

import logging

from evoscientist_final_answer.store.api.calls import in_our_api_call

ROUTE_SUFFIX = "/final-answer"
# 499: the client left a held request (a closed tab), as normal as the others.
NORMAL_STATUSES = frozenset({200, 304, 404, 422, 499})
# The logger langgraph-api hands its access-log middleware (its server module's).
ACCESS_LOGGER = "langgraph_api.server"
HTTPX_LOGGER = "httpx"


class _QuietOurCalls(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not in_our_api_call()


class _QuietRouteOutcomes(logging.Filter):
    """Drops the access line of a normal answer of the route (and of the route's own
    in-process calls); structlog hands the fields over as the record's ``msg`` dict."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = record.msg if isinstance(record.msg, dict) else {}
        status = fields.get("status")
        if in_our_api_call() and isinstance(status, int) and status < 500:
            return False
        path = fields.get("path")
        return not (
            isinstance(path, str)
            and path.endswith(ROUTE_SUFFIX)
            and fields.get("method") in ("GET", "HEAD")
            and status in NORMAL_STATUSES
        )


_FILTERS = {ACCESS_LOGGER: _QuietRouteOutcomes(), HTTPX_LOGGER: _QuietOurCalls()}


def install() -> None:
    """Idempotent: each filter is added once to its logger.

    Two loggers would otherwise write a line per request: the server's access log, which
    logs every 4xx as a WARNING (a 404 or 422 is a normal answer of the route), and
    ``httpx``, which logs each in-process API call the route makes at INFO. Anything else
    (a 5xx, the server's own calls) is logged as usual."""
    for name, log_filter in _FILTERS.items():
        logger = logging.getLogger(name)
        if log_filter not in logger.filters:
            logger.addFilter(log_filter)
