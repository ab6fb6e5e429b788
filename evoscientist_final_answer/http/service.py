"""The service behind the route: what it reads through, wired once from where this
process runs (``server.placement``); its reads (``read.Reads``) and its long-polls
(``longpoll.waiting``), which share reads."""

from __future__ import annotations

from collections.abc import Callable

from evoscientist_final_answer import settings
from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.longpoll.delivery import Respond
from evoscientist_final_answer.http.longpoll.waiting import LongPolls
from evoscientist_final_answer.http.read import Reads
from evoscientist_final_answer.server.placement import Placement, this_process
from evoscientist_final_answer.server.view import NoServer, ServerView
from evoscientist_final_answer.store.api.reader import ApiAnswerReader
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.host import StoreAddress, environment_store

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
        ``server``: what the server knows of a thread (default: nothing, ``NoServer``;
        ``placed`` passes where this process runs). ``shared_store``: other servers
        write the same store (PostgreSQL): a run this server does not know may be alive
        on one of them. ``silence_bound``: default ``EVOSCIENTIST_RUN_SILENCE_SECONDS``."""
        self.direct = direct
        self.api = api
        self.server = NoServer() if server is None else server
        self.reads = Reads(
            direct,
            api,
            self.server,
            deadline=read_deadline,
            shared_store=shared_store,
            silence_bound=silence_bound,
        )
        self.long_polls = LongPolls(self.reads.now, direct, self.server)

    @classmethod
    def from_environment(cls) -> FinalAnswerService:
        """The direct read of the store the environment names: PostgreSQL when
        ``EVOSCIENTIST_DATABASE_URI`` is set, else ``sessions.db``."""
        return cls.of_store(environment_store())

    @classmethod
    async def for_this_process(cls) -> FinalAnswerService:
        """Where this process runs (``server.placement``): inside a langgraph API
        server, the store it was configured with, else only its API; a sidecar, only
        the API of the server it stands beside; standalone, the environment's store."""
        placement = this_process()
        return cls.placed(placement, await placement.store())

    @classmethod
    def of_store(cls, store: StoreAddress | None) -> FinalAnswerService:
        """``store`` read directly, the rest as where this process runs has it."""
        return cls.placed(this_process(), store)

    @classmethod
    def placed(cls, placement: Placement, store: StoreAddress | None) -> FinalAnswerService:
        """What ``placement`` hands out, with ``store`` read directly."""
        return cls(
            None if store is None else store.reader(placement.agent),
            placement.api,
            server=placement.server,
            shared_store=store is not None and store.shared,
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
        """The answer now (``read.Reads.now``). ``user_id``: the authenticated caller; only
        that user's checkpoints answer."""
        return (await self.reads.now(thread_id, run_id, user_id))[0]

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
