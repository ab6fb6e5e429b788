"""The service behind the route: its wiring, and the fallback from the direct read of
the store to the langgraph API.

One read is: the server's facts of the thread (``server``: picked once, fetched as the
verdict needs them), the checkpoint (the store, else the API), the verdict
(``answer.run_liveness.verdict``). Long-polls (``longpoll.waiting``) share reads.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from evoscientist_final_answer import settings
from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.run_liveness import Rules
from evoscientist_final_answer.http.longpoll.delivery import Respond
from evoscientist_final_answer.http.longpoll.waiting import LongPolls
from evoscientist_final_answer.server.choice import api_for_this_process, server_view
from evoscientist_final_answer.server.view import ServerView, ThreadFacts
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.deleted_runs import deleted_here
from evoscientist_final_answer.store.errors import StoreUnavailable, ThreadNotFound
from evoscientist_final_answer.store.host import (
    StoreAddress,
    environment_store,
    this_process_agent,
    this_process_store,
)
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader

logger = logging.getLogger(__name__)

# The longest one read may take (a locked store, a slow API): past it the request ends
# in a retryable 503 instead of hanging. A long-poll gets its ``wait`` on top.
READ_DEADLINE_SECONDS = 5.0


class FinalAnswerService:
    def __init__(
        self,
        direct: CheckpointAnswerReader | None,
        api: ApiAnswerReader | None,
        *,
        read_deadline: float = READ_DEADLINE_SECONDS,
        shared_store: bool = False,
        silence_bound: float | None = None,
        server: ServerView | None = None,
    ) -> None:
        """``direct``: the store's reader; ``api``: the langgraph API to fall back on.
        ``server``: what the server knows of a thread (default: ``api``'s server, seen
        from this process: ``server.choice``). ``shared_store``: other servers write the
        same store (PostgreSQL): a run this server does not know may be alive on one of
        them. ``silence_bound``: default ``EVOSCIENTIST_RUN_SILENCE_SECONDS``."""
        self.direct = direct
        self.api = api
        self.server = server_view(api) if server is None else server
        self.read_deadline = read_deadline
        self.shared_store = shared_store
        self.silence_bound = silence_bound
        self.long_polls = LongPolls(self.read_with_lag, direct, self.server)

    @classmethod
    def from_environment(cls) -> FinalAnswerService:
        """The direct read of the store the environment names: PostgreSQL when
        ``EVOSCIENTIST_DATABASE_URI`` is set, else ``sessions.db``."""
        return cls.of_store(environment_store())

    @classmethod
    async def for_this_process(cls) -> FinalAnswerService:
        """Inside a langgraph API server, the store the server was configured with (its
        checkpointer's, untold: ``store.host``), else only the server's API (its own
        in-memory store, or a saver we cannot read); standalone, the environment's."""
        return cls.of_store(await this_process_store())

    @classmethod
    def of_store(cls, store: StoreAddress | None) -> FinalAnswerService:
        agent = this_process_agent()
        direct: CheckpointAnswerReader | None = None
        shared = False
        if store is not None and store.postgres_conninfo is not None:
            from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader

            direct = PostgresAnswerReader(store.postgres_conninfo, agent)
            shared = True
        elif store is not None and store.sqlite_path is not None:
            direct = SqliteAnswerReader(store.sqlite_path, agent)
        return cls(
            direct,
            api_for_this_process(settings.fallback_api_url()),
            shared_store=shared,
            silence_bound=settings.run_silence_seconds(),
        )

    async def close(self) -> None:
        await self.long_polls.close()
        await self.server.close()
        if self.direct is not None:
            await self.direct.close()
        if self.api is not None:
            await self.api.close()

    async def read(
        self, thread_id: str, run_id: str | None = None, *, user_id: str | None = None
    ) -> FinalAnswer:
        """The answer now. Raises ``ThreadNotFound``, ``RunNotFound`` or
        ``StoreUnavailable`` (its subclass ``CheckpointUnreadable`` when the data itself
        cannot be decoded).

        ``user_id``: the authenticated caller; only that user's checkpoints answer.
        """
        try:
            async with asyncio.timeout(self.read_deadline):
                return (await self._read_once(thread_id, run_id, user_id))[0]
        except TimeoutError:
            raise StoreUnavailable(f"no store answered within {self.read_deadline:g}s") from None

    async def read_with_lag(
        self, thread_id: str, run_id: str | None, user_id: str | None = None
    ) -> tuple[FinalAnswer, bool]:
        """One read, as ``read``; and whether the server lags a checkpoint that looks
        finished (``waiting``)."""
        try:
            async with asyncio.timeout(self.read_deadline):
                return await self._read_once(thread_id, run_id, user_id)
        except TimeoutError:
            raise StoreUnavailable(f"no store answered within {self.read_deadline:g}s") from None

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
                stored, answer = await _judged(
                    lambda: direct.read(thread_id, run_id, user_id=user_id), facts, run_id, rules
                )
                return answer, stored.complete and not answer.complete
            except ThreadNotFound:
                # The server may know a thread whose first checkpoint is not written
                # yet, or one it keeps in another store; not another user's, though:
                # that is answered as an unknown id is, at once, "not found" (its
                # checkpoints are here, none by this user; or it has none yet and its
                # runs were all started by others).
                if self.api is None or not await facts.server_knows_thread():
                    raise
                if user_id is not None and (
                    await direct.holds_thread(thread_id) or await facts.started_by_others(user_id)
                ):
                    raise
            except StoreUnavailable as exc:
                direct_failure = exc
        # 2'. Else the checkpoint through the API; 3. the verdict.
        api = self.api
        if api is None:
            raise direct_failure or StoreUnavailable("no store configured")
        try:
            _, answer = await _judged(
                lambda: api.read(thread_id, run_id, user_id=user_id), facts, run_id, rules
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

    async def wait(
        self,
        thread_id: str,
        run_id: str | None,
        seconds: float,
        changed: Callable[[FinalAnswer], bool] | None = None,
        *,
        user_id: str | None = None,
        respond: Respond | None = None,
    ) -> FinalAnswer:
        """Hold until the run is complete, ``changed(answer)`` holds, or time is up
        (``longpoll.waiting``: one shared poll per thread; ``respond``:
        ``longpoll.delivery``)."""
        return await self.long_polls.wait(
            thread_id, run_id, seconds, changed, user_id=user_id, respond=respond
        )


async def _judged(
    read: Callable[[], Awaitable[FinalAnswer]],
    facts: ThreadFacts,
    run_id: str | None,
    rules: Rules,
) -> tuple[FinalAnswer, FinalAnswer]:
    """The checkpoint's answer from ``read`` (the store's or the API's), and its verdict.

    The server's runs are read after the checkpoint: a run that finished between the two
    reads would look stopped with work left. When the verdict ends a run the checkpoint
    does not, the checkpoint is read again, now newer than what the server said."""
    stored = await read()
    answer = await facts.judge(stored, run_id, rules)
    if answer.complete and not stored.complete:
        again = await read()
        if again != stored:
            stored, answer = again, await facts.judge(again, run_id, rules)
    return stored, answer
