"""Choose the path that answers: the direct checkpoint read, else the langgraph API.

Inside the server the thread's status from the API is read first and takes
precedence over what the newest checkpoint alone suggests.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from evoscientist_final_answer import settings
from evoscientist_final_answer.answer.result import (
    FinalAnswer,
    pending_answer,
    run_state,
    with_run_state,
    with_thread_status,
)
from evoscientist_final_answer.answer.run_liveness import ServerRuns, Writer, judge
from evoscientist_final_answer.answer.status import RunState, RunStatus
from evoscientist_final_answer.http.longpoll.delivery import Respond
from evoscientist_final_answer.http.longpoll.waiting import LongPolls
from evoscientist_final_answer.store.api.reader import ApiAnswerReader, inside_langgraph_server
from evoscientist_final_answer.store.api.run_owners import api_run_owners, runtime_run_owners
from evoscientist_final_answer.store.api.runtime_status import (
    RuntimeThreadStatus,
    RuntimeUnavailable,
    runtime_runs,
)
from evoscientist_final_answer.store.api.server_runs import server_runs
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.deleted_runs import deleted_here
from evoscientist_final_answer.store.errors import RunNotFound, StoreUnavailable, ThreadNotFound
from evoscientist_final_answer.store.host import StoreAddress, host_saver, store_of
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
    ) -> None:
        self.direct = direct
        self.api = api
        self.read_deadline = read_deadline
        # Other servers write the same store (PostgreSQL): a run this server does not
        # know may be alive on one of them.
        self.shared_store = shared_store
        self.silence_bound = silence_bound
        self.runtime_status = RuntimeThreadStatus()
        self.long_polls = LongPolls(self)

    @classmethod
    def from_environment(cls) -> FinalAnswerService:
        """The direct read of the store the environment names: PostgreSQL when
        ``EVOSCIENTIST_DATABASE_URI`` is set, else ``sessions.db``."""
        uri = settings.database_uri()
        if uri is not None:
            return cls.of_store(StoreAddress(postgres_conninfo=uri))
        return cls.of_store(StoreAddress(sqlite_path=settings.sessions_db_path()))

    @classmethod
    async def for_this_process(cls) -> FinalAnswerService:
        """Inside a langgraph API server, the store the server was configured with (its
        checkpointer's, untold: ``store.host``), else only the server's API (its own
        in-memory store, or a saver we cannot read); standalone, the environment's."""
        if not inside_langgraph_server():
            return cls.from_environment()
        saver = await host_saver()
        return cls.of_store(None if saver is None else await store_of(saver))

    @classmethod
    def of_store(cls, store: StoreAddress | None) -> FinalAnswerService:
        agent = settings.agent_filter(inside_langgraph_server())
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
            ApiAnswerReader.for_environment(settings.fallback_api_url()),
            shared_store=shared,
            silence_bound=settings.run_silence_seconds(),
        )

    async def close(self) -> None:
        await self.long_polls.close()
        if self.direct is not None:
            await self.direct.close()
        if self.api is not None:
            await self.api.close()

    async def _server_thread_status(self, thread_id: str) -> str | None:
        if self.api is None or not inside_langgraph_server():
            return None
        if self.api.url is None:  # this process is the server: read its own table
            try:
                status = self.runtime_status.status(thread_id)
            except RuntimeUnavailable:
                pass  # another runtime: ask it through the API
            else:
                self.api.observed(thread_id, status)
                return status
        try:
            return await self.api.thread_status(thread_id)
        except StoreUnavailable:
            logger.warning(
                "thread %s: server status unavailable; using the checkpoint alone", thread_id
            )
            return None

    async def _server_runs(
        self, thread_id: str, thread_status: str | None, run_id: str | None
    ) -> ServerRuns | None:
        """This server's runs of the thread: read from its own run table when this
        process is the server (microseconds, where a request through the API costs
        milliseconds on the loop every run shares), else asked through the API."""
        assert self.api is not None
        if self.api.url is None:
            try:
                return ServerRuns(thread_status, runtime_runs(thread_id))
            except RuntimeUnavailable:
                pass  # another runtime: ask it through the API
        try:
            return await server_runs(self.api.client, thread_id, thread_status, (run_id,))
        except StoreUnavailable:
            logger.warning("thread %s: the server's runs unavailable", thread_id)
            return None

    async def read(
        self, thread_id: str, run_id: str | None = None, *, user_id: str | None = None
    ) -> FinalAnswer:
        """The answer now. Raises ``ThreadNotFound`` or ``StoreUnavailable`` (its
        subclass ``CheckpointUnreadable`` when the data itself cannot be decoded).

        ``user_id``: the authenticated caller; only that user's checkpoints answer.
        """
        return (await self.read_with_lag(thread_id, run_id, user_id))[0]

    async def read_with_lag(
        self, thread_id: str, run_id: str | None, user_id: str | None = None
    ) -> tuple[FinalAnswer, bool]:
        """One read, within the deadline; and whether the server lags a checkpoint that
        looks finished (``waiting``)."""
        try:
            async with asyncio.timeout(self.read_deadline):
                return await self._read_once(thread_id, run_id, user_id)
        except TimeoutError:
            raise StoreUnavailable(f"no store answered within {self.read_deadline:g}s") from None

    async def _read_once(
        self, thread_id: str, run_id: str | None, user_id: str | None
    ) -> tuple[FinalAnswer, bool]:
        """The answer, and whether the server lags a checkpoint that looks finished."""
        thread_status = await self._server_thread_status(thread_id)
        direct_failure: StoreUnavailable | None = None
        if self.direct is not None:
            try:
                stored = await self.direct.read(thread_id, run_id, user_id=user_id)
                answer, server = await self._judged(thread_id, run_id, stored, thread_status)
                if answer.complete and not stored.complete:
                    # The server's runs were read after the checkpoint: a run that
                    # finished between the two reads would look stopped with work left.
                    # Read the checkpoint again, now newer than what the server said.
                    again = await self.direct.read(thread_id, run_id, user_id=user_id)
                    if again != stored:
                        stored = again
                        answer, _ = await self._judged(
                            thread_id, run_id, stored, thread_status, server
                        )
                return answer, stored.complete and not answer.complete
            except ThreadNotFound:
                # The server may know a thread whose first checkpoint is not written
                # yet, or one it keeps in another store.
                if self.api is None or (thread_status is None and inside_langgraph_server()):
                    raise
                if user_id is not None and await self._anothers_thread(thread_id, user_id):
                    raise  # answered as an unknown id is: at once, "not found"
            except StoreUnavailable as exc:
                direct_failure = exc
        if self.api is None:
            raise direct_failure or StoreUnavailable("no store configured")
        try:
            answer = await self.api.read(thread_id, run_id, user_id=user_id)
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
        return (await self._judged(thread_id, run_id, answer, None))[0], False

    async def _anothers_thread(self, thread_id: str, user_id: str) -> bool:
        """The thread is not this user's: its checkpoints are here, none by this user;
        or it has none yet and its runs were all started by others (else the API's
        ``pending`` held another user's long-poll until the first checkpoint, and the
        time its 404 took told that the thread exists)."""
        assert self.direct is not None and self.api is not None
        if await self.direct.holds_thread(thread_id):
            return True
        owners: set[str] = set()
        if self.api.url is None and inside_langgraph_server():
            try:
                owners = runtime_run_owners(thread_id)
            except RuntimeUnavailable:
                owners = await self._api_run_owners(thread_id)
        else:
            owners = await self._api_run_owners(thread_id)
        return bool(owners) and user_id not in owners

    async def _api_run_owners(self, thread_id: str) -> set[str]:
        assert self.api is not None
        try:
            return await api_run_owners(self.api.client, thread_id)
        except StoreUnavailable:
            return set()  # nothing learnt: the API's own answer decides

    async def _judged(
        self,
        thread_id: str,
        run_id: str | None,
        answer: FinalAnswer,
        thread_status: str | None,
        server: ServerRuns | None = None,
    ) -> tuple[FinalAnswer, ServerRuns | None]:
        """``answer`` (from its checkpoint) as what is known of its run has it: this
        server's runs (``server``, asked here when not given), the checkpoint's writer,
        the thread's silence (``evoscientist_final_answer.answer.run_liveness``); and the server's
        runs it was judged by. Raises ``RunNotFound`` for a run that nothing knows."""
        inside = self.api is not None and inside_langgraph_server()
        if inside and answer.complete and thread_status != "busy":
            return with_thread_status(answer, thread_status), server  # nothing more to ask
        if not inside and answer.server_busy:
            # Read through a fallback API that holds the run as executing: however
            # long it has been silent, that server vouches for it.
            return answer, server
        if inside and server is None:
            server = await self._server_runs(thread_id, thread_status, answer.run_id)
        if server is not None and run_id is None:
            successor = server.successor(answer.run_id)
            if successor is not None:
                # The thread's latest turn is a run that has written nothing yet: its
                # answer is empty, never the previous turn's.
                return pending_answer(thread_id, successor, answer.source), server
        if server is not None and run_id is not None and run_id == answer.run_id:
            server = server.about(run_id)  # asked for a run that ended: a later one's busy
        if (
            server is not None
            and answer.status is RunStatus.PENDING
            and run_id is not None
            and run_id not in server.runs
            and (not self.shared_store or deleted_here(run_id))
        ):
            raise RunNotFound(run_id)
        writer = Writer(answer.run_id, answer.graph_id, _silent_for(answer.updated_at))
        bound = self.silence_bound
        if bound is None:
            bound = settings.run_silence_seconds()
        state = judge(
            run_state(answer), writer, server, shared_store=self.shared_store, silence_bound=bound
        )
        if _lost(state) and not inside and await self._fallback_busy(thread_id):
            # Silent past the bound, but the fallback API (the server running it)
            # holds the thread busy: it vouches for the run.
            return answer, server
        return with_run_state(answer, state), server

    async def _fallback_busy(self, thread_id: str) -> bool:
        """The configured fallback API says the thread is ``busy``; False when there is
        none, or it cannot say."""
        if self.api is None or self.api.url is None:
            return False
        try:
            return await self.api.thread_status(thread_id) == "busy"
        except StoreUnavailable as exc:
            logger.warning("thread %s: the fallback API's status unavailable: %s", thread_id, exc)
            return False

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


def _lost(state: RunState) -> bool:
    return state.error is not None and state.error.get("code") == "run_lost"


def _silent_for(updated_at: str | None) -> float | None:
    """Seconds since a checkpoint's ``ts`` (writers stamp UTC)."""
    if updated_at is None:
        return None
    try:
        written = datetime.fromisoformat(updated_at)
    except ValueError:
        return None
    if written.tzinfo is None:
        written = written.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - written).total_seconds())
