"""The caller's credentials on the route's API calls, where the API is another server's
(the sidecar: ``EVOSCIENTIST_READ_FROM=api``), so that server's auth decides what each
caller reads: set per request (``as_caller``), added to each call (``add_caller``), and
keying shared long-polls (``credentials_key``) so one caller's reads never answer another's.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import httpx

# Headers that describe the caller's request, not the caller: never passed on (the
# JS route's list, clients/js/src/route/clients.js).
NOT_PASSED_ON = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-length",
        "content-type",
        "host",
        "if-none-match",
        "keep-alive",
        "transfer-encoding",
        "upgrade",
    }
)

Credentials = tuple[tuple[str, str], ...]

_caller: contextvars.ContextVar[Credentials] = contextvars.ContextVar(
    "evoscientist_caller_credentials", default=()
)


def passed_on(headers: Iterable[tuple[str, str]]) -> Credentials:
    """The caller's headers that go with the route's API calls, in a stable order."""
    return tuple(sorted((k.lower(), v) for k, v in headers if k.lower() not in NOT_PASSED_ON))


@contextmanager
def as_caller(headers: Iterable[tuple[str, str]]) -> Iterator[None]:
    token = _caller.set(passed_on(headers))
    try:
        yield
    finally:
        _caller.reset(token)


def credentials_key() -> Credentials:
    """The credentials in effect: part of a shared long-poll's key."""
    return _caller.get()


async def add_caller(request: httpx.Request) -> None:
    """An ``httpx`` request hook: the caller's headers replace the client's own."""
    for name, value in _caller.get():
        request.headers[name] = value
