"""One read of a thread's answer, under a deadline: the server's facts, the checkpoint
(the store, else the API), the verdict. The service and its long-polls read through it,
and it calls nothing above itself."""

from __future__ import annotations

import asyncio
import logging

from evoscientist_final_answer import settings
from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.run_liveness import Rules
from evoscientist_final_answer.server.view import ServerView
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.deleted_runs import deleted_here
from evoscientist_final_answer.store.errors import StoreUnavailable, ThreadNotFound

logger = logging.getLogger(__name__)


class Reads:
    def __init__(
        self,
        direct: CheckpointAnswerReader | None,
        api: ApiAnswerReader | None,
        server: ServerView,
        *,
        deadline: float,
        shared_store: bool,
        silence_bound: float | None,
    ) -> None:
        """``deadline``: the longest one read may take. ``shared_store``,
        ``silence_bound``: the verdict's ``Rules`` (the bound, when None, is
        ``EVOSCIENTIST_RUN_SILENCE_SECONDS`` at each read)."""
        self.direct = direct
        self.api = api
        self.server = server
        self.deadline = deadline
        self.shared_store = shared_store
        self.silence_bound = silence_bound

    async def now(
        self, thread_id: str, run_id: str | None, user_id: str | None = None
    ) -> tuple[FinalAnswer, bool]:
        """The answer now, and whether the server lags a checkpoint that looks finished
        (for ``longpoll.waiting``). Raises ``ThreadNotFound``, ``RunNotFound`` or
        ``StoreUnavailable`` (``CheckpointUnreadable`` when the data itself cannot be
        decoded); past the deadline, a retryable ``StoreUnavailable``, not a hang."""
        try:
            async with asyncio.timeout(self.deadline):
                return await self._read_once(thread_id, run_id, user_id)
        except TimeoutError:
            raise StoreUnavailable(f"no store answered within {self.deadline:g}s") from None

    async def _read_once(
        self, thread_id: str, run_id: str | None, user_id: str | None
    ) -> tuple[FinalAnswer, bool]:
        # 1. The server's facts: its status first, before the checkpoint (a run that
        #    ends between the two then shows in the checkpoint); the rest when needed.
        facts = self.server.facts(thread_id)
        await facts.status()
        rules = Rules(
            self.shared_store,
            settings.run_silence_seconds() if self.silence_bound is None else self.silence_bound,
            deleted_here,
        )
        # 2. The checkpoint, read directly; 3. the verdict.
        direct_failure: StoreUnavailable | None = None
        direct = self.direct
        if direct is not None:
            try:
                stored, answer = await facts.judged(
                    lambda: direct.read(thread_id, run_id, user_id=user_id), run_id, rules
                )
                return answer, stored.complete and not answer.complete
            except ThreadNotFound:
                if self.api is None or not await facts.held_elsewhere(
                    user_id, lambda: direct.holds_thread(thread_id)
                ):
                    raise
            except StoreUnavailable as exc:
                direct_failure = exc
        # 2'. Else the checkpoint through the API; 3. the verdict.
        api = self.api
        if api is None:
            raise direct_failure or StoreUnavailable("no store configured")
        try:
            _, answer = await facts.judged(
                lambda: api.read(thread_id, run_id, user_id=user_id), run_id, rules
            )
        except StoreUnavailable as exc:
            if direct_failure is None:
                raise
            # Report the direct path's reason: an unreadable checkpoint stays one.
            raise type(direct_failure)(f"{direct_failure}; the API failed too: {exc}") from exc
        if direct_failure is not None:
            logger.warning(
                "thread %s: direct read failed (%s); answered through the API",
                thread_id,
                direct_failure,
            )
        return answer, False
