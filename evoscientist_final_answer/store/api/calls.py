"""Marks the route's own in-process API calls, so that the HTTP layer's log filters
(``evoscientist_final_answer.http.quiet_logs``) can drop their lines: the store readers
mark, the HTTP layer filters, and neither imports the other."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

_our_calls: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "evoscientist_our_api_calls", default=False
)


@contextmanager
def our_api_calls() -> Iterator[None]:
    """Around the route's own in-process API calls: their ``httpx`` lines are dropped."""
    token = _our_calls.set(True)
    try:
        yield
    finally:
        _our_calls.reset(token)


def in_our_api_call() -> bool:
    return _our_calls.get()
