"""Why a store could not answer; the route maps each to its documented error."""

from __future__ import annotations


class ThreadNotFound(Exception):
    """The store is readable and holds no checkpoint this route may answer from."""


class StoreUnavailable(Exception):
    """The store could not be read (missing, locked, unreadable); another path may work."""


class CheckpointUnreadable(StoreUnavailable):
    """The store was read, but the answering checkpoint cannot be decoded: a damaged or
    truncated blob, a serializer this process does not have (an unknown type, an
    encrypted blob without its key), or a message history whose older part is gone.

    Retrying the same read gives the same result; another path (the langgraph API) or a
    new checkpoint may still answer.
    """


class ApiInvalid(StoreUnavailable):
    """The langgraph API answered, but not with what its contract says (an HTML page,
    JSON of another shape, an absurd size): nothing it said is passed on."""


class StoreDamaged(StoreUnavailable):
    """The store file is not a database, or its pages are corrupt: retrying will not
    help until it is repaired or replaced (a locked or busy store is the retryable
    ``StoreUnavailable``)."""


class CallerUnauthorized(Exception):
    """The langgraph API read as the caller (the sidecar) refused the caller's
    credentials (401): passed on as the route's own 401."""
