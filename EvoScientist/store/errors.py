"""Why a store could not answer; the route maps each to its documented error."""

from __future__ import annotations


class ThreadNotFound(Exception):
    """The store is readable and holds no checkpoint this route may answer from."""


class StoreUnavailable(Exception):
    """The store could not be read (missing, locked, unreadable); another path may work."""
