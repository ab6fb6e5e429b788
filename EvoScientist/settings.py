"""The demo's own settings (which model it runs, how fast the offline one streams), on
top of the route's (``evoscientist_final_answer.settings``), which it re-exports for its
checkpointer factory.

Read at call time rather than import time so tests (and ``langgraph dev`` workers)
can point one process at a temporary data directory.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

from evoscientist_final_answer import settings as route_settings
from evoscientist_final_answer.settings import (
    SettingError,
    data_dir,
    database_uri,
    fallback_api_url,
    gc_tuning,
    max_held_requests,
    run_silence_seconds,
    sessions_db_path,
)

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_TOKEN_DELAY",
    "SETTINGS",
    "SettingError",
    "data_dir",
    "database_uri",
    "fallback_api_url",
    "gc_tuning",
    "max_held_requests",
    "model_name",
    "model_spec",
    "offline_token_delay",
    "postgres_pool_timeout",
    "run_silence_seconds",
    "sessions_db_path",
    "validate",
]

DEFAULT_MODEL = "offline"
DEFAULT_TOKEN_DELAY = 0.02
# psycopg_pool's own wait for a free connection before a statement fails.
DEFAULT_POSTGRES_POOL_TIMEOUT = 30.0


def model_name() -> str:
    return os.environ.get("EVOSCIENTIST_MODEL", "").strip() or DEFAULT_MODEL


def offline_token_delay() -> float:
    delay = route_settings.number("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", DEFAULT_TOKEN_DELAY)
    if not 0 <= delay < math.inf:  # also refuses nan
        raise ValueError(
            f"EVOSCIENTIST_OFFLINE_TOKEN_DELAY must be a number of seconds >= 0, got {delay!r}"
        )
    return delay


def postgres_pool_timeout() -> float:
    """Seconds the PostgreSQL checkpointer waits for a connection before a statement
    fails: how long a run or an API request stays stuck in an outage."""
    timeout = route_settings.number(
        "EVOSCIENTIST_POSTGRES_POOL_TIMEOUT", DEFAULT_POSTGRES_POOL_TIMEOUT
    )
    if not 0 < timeout < math.inf:  # also refuses nan
        raise ValueError(
            f"EVOSCIENTIST_POSTGRES_POOL_TIMEOUT must be a number of seconds > 0, got {timeout!r}"
        )
    return timeout


def model_spec() -> object:
    """``model_name()`` as the model registry reads it (an unknown spelling raises)."""
    from EvoScientist.models import parse_spec  # models reads this module

    return parse_spec(model_name())


# The route's settings and the demo's: checked once when the demo server starts.
SETTINGS: dict[str, Callable[[], object]] = {
    **route_settings.SETTINGS,
    "EVOSCIENTIST_MODEL": model_spec,
    "EVOSCIENTIST_OFFLINE_TOKEN_DELAY": offline_token_delay,
    "EVOSCIENTIST_POSTGRES_POOL_TIMEOUT": postgres_pool_timeout,
}


def validate() -> None:
    """``SettingError`` naming the first setting, the route's or the demo's, that
    cannot be used."""
    route_settings.validate(SETTINGS)
