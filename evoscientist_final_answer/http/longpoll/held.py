"""A cap on the requests held at once (``wait=`` long-polls): each keeps its socket open,
and near the process's open-file limit held polls would starve the whole server.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from evoscientist_final_answer import settings

logger = logging.getLogger(__name__)

# At the cap, one warning per this many seconds.
WARNING_SECONDS = 60.0


class HeldRequests:
    """Counts held requests against the cap (``EVOSCIENTIST_MAX_HELD_REQUESTS``, default half
    the soft ``RLIMIT_NOFILE``). Past it a long-poll is answered at once with the current
    answer, as a request without ``wait`` is: its socket is given back, and the recovery
    clients, seeing a poll come back early, wait before they ask again."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = settings.max_held_requests() if limit is None else limit
        self.count = 0
        self.turned_away = 0  # requests answered at once for the cap
        self._warned_at: float | None = None

    @contextmanager
    def hold(self) -> Iterator[bool]:
        """Whether this request may be held; counted as held until the block ends."""
        if self.count >= self.limit:
            self._turn_away()
            yield False
            return
        self.count += 1
        try:
            yield True
        finally:
            self.count -= 1

    def _turn_away(self) -> None:
        self.turned_away += 1
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at >= WARNING_SECONDS:
            self._warned_at = now
            logger.warning(
                "%d requests held (EVOSCIENTIST_MAX_HELD_REQUESTS): further wait= requests "
                "are answered at once (%d so far)",
                self.count,
                self.turned_away,
            )
