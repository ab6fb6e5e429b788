"""The route's settings, read from the environment at call time rather than import time,
so tests (and ``langgraph dev`` workers) can point one process at a temporary data directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_AGENT_NAME = "EvoScientist"


def data_dir() -> Path:
    """``$EVOSCIENTIST_DATA_DIR``, default ``~/.evoscientist`` (the upstream convention)."""
    configured = os.environ.get("EVOSCIENTIST_DATA_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".evoscientist"


def sessions_db_path() -> Path:
    return data_dir() / "sessions.db"


POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def database_uri() -> str | None:
    """``$EVOSCIENTIST_DATABASE_URI``: a ``postgresql://`` URI puts the checkpoints (and
    the route's direct read) in that PostgreSQL database, shared by any number of API
    servers; unset, everything stays in ``sessions.db``."""
    uri = os.environ.get("EVOSCIENTIST_DATABASE_URI", "").strip()
    if not uri:
        return None
    if not uri.startswith(POSTGRES_SCHEMES):
        raise ValueError(
            "EVOSCIENTIST_DATABASE_URI must be a postgresql:// URI "
            f"(only PostgreSQL is supported), got {uri.split(':', 1)[0]!r}"
        )
    return uri


def agent_name() -> str | None:
    """``$EVOSCIENTIST_AGENT_NAME``, when set: only checkpoint rows this agent wrote (or
    that name no agent) answer."""
    return os.environ.get("EVOSCIENTIST_AGENT_NAME", "").strip() or None


def agent_filter(inside_server: bool) -> str | None:
    """The agent whose rows answer: ``EVOSCIENTIST_AGENT_NAME`` when set; else, inside a
    langgraph API server, none (the server hosts many graphs, each stamping its own
    name, and a thread of any of them is the server's); standalone, ``EvoScientist``."""
    configured = agent_name()
    if configured is not None or inside_server:
        return configured
    return DEFAULT_AGENT_NAME


def fallback_api_url() -> str | None:
    """Base URL of a langgraph API server to ask when the direct read fails.

    Inside ``langgraph dev`` no URL is needed (the SDK reaches the same process);
    a standalone app only falls back when this is set.
    """
    url = os.environ.get("EVOSCIENTIST_LANGGRAPH_URL", "").strip() or None
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"EVOSCIENTIST_LANGGRAPH_URL must be an http(s):// URL, got {url!r}")
    return url


READ_FROM_STORE = "store"
READ_FROM_API = "api"


def read_from() -> str:
    """``$EVOSCIENTIST_READ_FROM``: where the standalone app reads checkpoints.

    ``store`` (default): the store the environment names, falling back to
    ``EVOSCIENTIST_LANGGRAPH_URL``'s API when set. ``api``: only that API, as each
    caller (its credentials passed on), judging runs by what that server says of them:
    the app as a sidecar of a server that takes no custom routes (a managed
    deployment, any LangGraph server). Inside a langgraph API server it is ignored:
    the route reads the server's own store."""
    value = os.environ.get("EVOSCIENTIST_READ_FROM", "").strip().lower() or READ_FROM_STORE
    if value not in (READ_FROM_STORE, READ_FROM_API):
        raise ValueError(f"EVOSCIENTIST_READ_FROM must be 'store' or 'api', got {value!r}")
    if value == READ_FROM_API and fallback_api_url() is None:
        raise ValueError(
            "EVOSCIENTIST_READ_FROM=api needs EVOSCIENTIST_LANGGRAPH_URL: the server to read"
        )
    return value


DEFAULT_RUN_SILENCE_SECONDS = 1800.0


def run_silence_seconds() -> float:
    """``$EVOSCIENTIST_RUN_SILENCE_SECONDS``: how long an unfinished run that no server
    can vouch for (a TUI run, a run of another server sharing the PostgreSQL database,
    any run read by the standalone app) may go without a new checkpoint before the route
    calls it lost (``run_lost``). Longer than any single model or tool call; ``inf``
    never calls such a run lost."""
    accepts = "EVOSCIENTIST_RUN_SILENCE_SECONDS must be a number of seconds > 0 (or inf)"
    raw = os.environ.get("EVOSCIENTIST_RUN_SILENCE_SECONDS", "").strip()
    try:
        seconds = number("EVOSCIENTIST_RUN_SILENCE_SECONDS", DEFAULT_RUN_SILENCE_SECONDS)
    except ValueError:
        raise ValueError(f"{accepts}, got {raw!r}") from None
    if not seconds > 0:  # also refuses nan
        raise ValueError(f"{accepts}, got {raw!r}")
    return seconds


GC_TUNING_ON = ("1", "true", "yes", "on")
GC_TUNING_OFF = ("0", "false", "no", "off")


def gc_tuning() -> bool:
    """``$EVOSCIENTIST_GC_TUNING`` (default on): tune the server's garbage collector
    (``evoscientist_final_answer.http.gc_tuning``)."""
    raw = os.environ.get("EVOSCIENTIST_GC_TUNING", "").strip().lower()
    if not raw or raw in GC_TUNING_ON:
        return True
    if raw in GC_TUNING_OFF:
        return False
    raise ValueError(f"EVOSCIENTIST_GC_TUNING must be 1 or 0 (true/false, on/off), got {raw!r}")


# Held long-polls take at most this share of the process's open-file limit: each holds
# a socket, and the rest must stay for new connections, runs and the stores' files.
HELD_SHARE_OF_FD_LIMIT = 0.5
# The default when the open-file limit is unlimited (or unknown).
UNLIMITED_HELD_REQUESTS = 100_000


def max_held_requests() -> int:
    """``$EVOSCIENTIST_MAX_HELD_REQUESTS``: how many ``wait=`` requests the route holds at
    once; past it a long-poll is answered at once with the current answer. Default: half
    the process's soft open-file limit (``RLIMIT_NOFILE``; 512 under the usual 1,024)."""
    raw = os.environ.get("EVOSCIENTIST_MAX_HELD_REQUESTS", "").strip()
    if not raw:
        return _default_max_held()
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(
            f"EVOSCIENTIST_MAX_HELD_REQUESTS must be a whole number, got {raw!r}"
        ) from None
    if value < 0:
        raise ValueError(f"EVOSCIENTIST_MAX_HELD_REQUESTS must be >= 0, got {raw!r}")
    return value


def _default_max_held() -> int:
    try:
        import resource
    except ImportError:  # pragma: no cover - not a POSIX system
        return UNLIMITED_HELD_REQUESTS
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return UNLIMITED_HELD_REQUESTS
    return max(1, int(soft * HELD_SHARE_OF_FD_LIMIT))


class SettingError(ValueError):
    """A setting the environment holds that cannot be used; the message names it."""


# Every setting the server reads, by its variable: each getter raises ValueError for a
# value it cannot use. Checked once at start-up (``validate``), so a typo stops the
# server with one line naming it instead of failing every request it later serves.
SETTINGS: dict[str, Callable[[], object]] = {
    "EVOSCIENTIST_DATA_DIR": data_dir,
    "EVOSCIENTIST_AGENT_NAME": agent_name,
    "EVOSCIENTIST_LANGGRAPH_URL": fallback_api_url,
    "EVOSCIENTIST_READ_FROM": read_from,
    "EVOSCIENTIST_DATABASE_URI": database_uri,
    "EVOSCIENTIST_GC_TUNING": gc_tuning,
    "EVOSCIENTIST_RUN_SILENCE_SECONDS": run_silence_seconds,
    "EVOSCIENTIST_MAX_HELD_REQUESTS": max_held_requests,
}


def validate(checked: dict[str, Callable[[], object]] | None = None) -> None:
    """Read every setting once (``checked``: a host's own on top of these);
    ``SettingError`` naming the first that cannot be used."""
    for variable, read in (SETTINGS if checked is None else checked).items():
        try:
            read()
        except (ValueError, RuntimeError) as exc:  # RuntimeError: ``~`` with no home
            message = str(exc)
            if variable not in message:
                message = f"{variable}: {message}"
            raise SettingError(message) from None


def number(name: str, default: float) -> float:
    """``$name`` as a float; unset or blank is ``default``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
