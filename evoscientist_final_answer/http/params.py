"""Validate the route's path and query parameters; every failure is a 422.

A parameter given empty (``?wait=&run_id=``, as a form or URL template leaves an unset
field) means its default, the same as leaving it out.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.datastructures import QueryParams

MAX_ID_LENGTH = 256
MAX_WAIT_SECONDS = 60.0
FORMATS = ("json", "text")
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


class InvalidRequest(ValueError):
    """A parameter the route cannot accept; the message names it."""


@dataclass(frozen=True)
class FinalAnswerQuery:
    thread_id: str
    run_id: str | None = None
    wait: float = 0.0
    include_reasoning: bool = False
    format: str = "json"


def validate_id(value: str, name: str) -> str:
    """An id of 1–256 printable characters without ``/`` (8-hex TUI ids and UUIDs alike)."""
    if not 1 <= len(value) <= MAX_ID_LENGTH:
        raise InvalidRequest(f"{name} must be 1-{MAX_ID_LENGTH} characters long")
    if not value.isprintable() or "/" in value or value != value.strip():
        raise InvalidRequest(f"{name} must be printable characters without '/' or edge spaces")
    return value


def _single(params: QueryParams, name: str) -> str | None:
    """The parameter's one value; ``None`` when absent or empty (its default)."""
    values = params.getlist(name)
    if len(values) > 1:
        raise InvalidRequest(f"{name} given more than once")
    return values[0] if values and values[0] != "" else None


def parse_wait(raw: str | None) -> float:
    if raw is None or raw == "":
        return 0.0
    try:
        seconds = float(raw)
    except ValueError:
        raise InvalidRequest(f"wait must be a number of seconds, got {raw!r}") from None
    if not 0 <= seconds <= MAX_WAIT_SECONDS:  # also rejects nan
        raise InvalidRequest(f"wait must be between 0 and {MAX_WAIT_SECONDS:g} seconds")
    return seconds


def parse_bool(raw: str | None, name: str) -> bool:
    if raw is None or raw == "":
        return False
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InvalidRequest(f"{name} must be true or false, got {raw!r}")


def parse_query(thread_id: str, params: QueryParams) -> FinalAnswerQuery:
    run_id = _single(params, "run_id")
    fmt = (_single(params, "format") or "json").lower()
    if fmt not in FORMATS:
        raise InvalidRequest(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return FinalAnswerQuery(
        thread_id=validate_id(thread_id, "thread_id"),
        run_id=validate_id(run_id, "run_id") if run_id is not None else None,
        wait=parse_wait(_single(params, "wait")),
        include_reasoning=parse_bool(_single(params, "include_reasoning"), "include_reasoning"),
        format=fmt,
    )
