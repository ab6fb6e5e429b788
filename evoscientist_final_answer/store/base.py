"""What every checkpointer-backed reader shares: pick the head, answer it once, cache, so a
poll that finds the same head reads no blob.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

from evoscientist_final_answer.answer.result import FinalAnswer, pending_answer, with_thread_status
from evoscientist_final_answer.answer.run_liveness import RunNotFound
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.store.errors import StoreUnavailable, ThreadNotFound
from evoscientist_final_answer.store.lru import LruCache

# Answers kept, by ``(thread, head)``.
CACHE_SIZE = 1024
# Runs found deleted, kept (``run_deleted``).
KNOWN_DELETED_RUNS = 4096
# ``metadata.source`` of a checkpoint written by ``graph.aupdate_state`` (not by a run).
UPDATE_SOURCE = "update"
# How many tidy-up checkpoints (``aupdate_state`` after a failed run) a read looks
# through to reach the failing run's own checkpoint. The EvoScientist TUI writes one or
# two; a longer chain of updates is someone editing the thread, not a tidy-up.
MAX_TIDY_UP = 8


@dataclass(frozen=True)
class Head:
    """The checkpoint that answers, and a signature of the writes stored against it
    (a resume or an interrupt is written there without a new checkpoint)."""

    checkpoint_id: str
    writes: tuple[int, int]


class CheckpointAnswerReader(ABC):
    """Reads answers from a checkpointer's own tables (``source: "checkpointer"``).

    A poll that finds the same head (same newest checkpoint, same writes against it) as
    the last one gets the cached answer; the server's thread status is applied afterwards,
    so it never goes stale in the cache."""

    def __init__(self, agent_name: str | None) -> None:
        # Only rows this agent wrote (or that name none) answer; ``None``: every row.
        self.agent_name = agent_name
        self.cache: LruCache[tuple[str, Head], FinalAnswer] = LruCache(CACHE_SIZE)
        self._decoding: dict[tuple[str, Head], asyncio.Future[FinalAnswer]] = {}
        self._deleted_runs: LruCache[str, None] = LruCache(KNOWN_DELETED_RUNS)

    @abstractmethod
    async def head(
        self, thread_id: str, run_id: str | None, user_id: str | None = None
    ) -> Head | None:
        """The newest root checkpoint this agent wrote (for ``run_id``, that run's; for
        ``user_id``, one whose metadata names that ``langgraph_auth_user_id``)."""

    @abstractmethod
    async def answer(self, thread_id: str, head: Head) -> FinalAnswer:
        """Decode ``head`` into an answer, from the checkpoint alone."""

    @abstractmethod
    def change_token(self, thread_id: str) -> object:
        """A marker of the store's state, taken before a read that may be waited on."""

    @abstractmethod
    async def wait_for_change(self, thread_id: str, since: object, timeout: float) -> None:
        """Return once the store may have changed for ``thread_id`` since the token was
        taken (at once if it already has), or after ``timeout`` seconds."""

    def forget_answers(self) -> None:
        """Drop every cached answer (and whatever else lets a poll skip work): the next
        read of each thread is a first read again."""
        self.cache.clear()
        self._deleted_runs.clear()

    async def close(self) -> None:  # noqa: B027 - readers without resources need nothing
        pass

    async def run_deleted(self, run_id: str) -> bool:
        """Whoever wrote the store deleted ``run_id`` (a rollback, on any server sharing
        it: ``store.deleted_runs``). Asked only for a run no checkpoint carries; a run
        found deleted is kept, since nothing of it is ever written again."""
        if run_id in self._deleted_runs:
            return True
        if not await self.marked_deleted(run_id):
            return False
        self._deleted_runs.put(run_id, None)
        return True

    async def marked_deleted(self, run_id: str) -> bool:
        """The store's own mark of a deleted run; a store without marks has none."""
        return False

    async def _head(self, thread_id: str, run_id: str | None, user_id: str | None) -> Head | None:
        if user_id is None:  # readers written before ``user_id`` keep working
            return await self.head(thread_id, run_id)
        return await self.head(thread_id, run_id, user_id=user_id)

    async def holds_thread(self, thread_id: str) -> bool:
        """The store holds a checkpoint of this agent for the thread (anyone's)."""
        return await self._head(thread_id, None, None) is not None

    async def read(
        self,
        thread_id: str,
        run_id: str | None = None,
        thread_status: str | None = None,
        *,
        user_id: str | None = None,
    ) -> FinalAnswer:
        """The answer from the checkpoint, seen through ``thread_status`` when given.

        With ``user_id`` (an authenticated caller) only checkpoints written by that
        user's runs count: another user's thread is ``ThreadNotFound``, as an unknown one.
        A ``run_id`` no checkpoint carries is ``pending``, unless the run was deleted
        (``RunNotFound``).
        """
        head = await self._head(thread_id, run_id, user_id)
        if head is None:
            if run_id is None:
                raise ThreadNotFound(thread_id)
            holds_thread = await self._head(thread_id, None, user_id) is not None
            # Another user's thread stays unknown, whatever was deleted from it.
            if (holds_thread or user_id is None) and await self.run_deleted(run_id):
                raise RunNotFound(run_id)
            if holds_thread:
                return pending_answer(thread_id, run_id, "checkpointer")
            raise ThreadNotFound(thread_id)
        answer = self.cache.get((thread_id, head))
        if answer is None:
            answer = await self._decode_once(thread_id, head)
        return with_thread_status(answer, thread_status)

    async def _decode_once(self, thread_id: str, head: Head) -> FinalAnswer:
        """Concurrent reads of one head share one decode: a commit wakes every waiting
        long-poll at once, and each would otherwise decode the same new checkpoint.

        The decode is shielded: a caller that gives up (its deadline, a dropped client)
        leaves it running for the others, and its answer is cached for the next poll."""
        key = (thread_id, head)
        decoding = self._decoding.get(key)
        if decoding is None:
            decoding = asyncio.ensure_future(self._decode(thread_id, head))
            self._decoding[key] = decoding
            decoding.add_done_callback(lambda done: self._decoded(key, done))
        return await asyncio.shield(decoding)

    async def _decode(self, thread_id: str, head: Head) -> FinalAnswer:
        answer = await self._through_tidy_up(thread_id, await self.answer(thread_id, head))
        self.cache.put((thread_id, head), answer)
        return answer

    async def _through_tidy_up(self, thread_id: str, answer: FinalAnswer) -> FinalAnswer:
        """A turn that failed stays failed after its writer tidied up.

        After a run fails, a writer may add checkpoints of its own with
        ``aupdate_state`` (the EvoScientist TUI closes dangling tool calls and clears the
        pending node) so the next turn starts cleanly. The newest checkpoint then looks
        finished. Its run's outcome is on the run's last checkpoint, below the updates:
        when that one holds the task's ``__error__`` and the updates added no answer and
        no new question (the same answering message), the turn failed.

        Read once per head (the result is cached with it), through at most
        ``MAX_TIDY_UP`` updates.
        """
        if answer.status is not RunStatus.SUCCESS or answer.origin != UPDATE_SOURCE:
            return answer
        below = answer
        for _ in range(MAX_TIDY_UP):
            if below.parent_checkpoint_id is None:
                return answer
            try:
                below = await self.answer(
                    thread_id, Head(below.parent_checkpoint_id, _UNKNOWN_WRITES)
                )
            except StoreUnavailable:
                return answer  # pruned or unreadable: the head is all there is
            if below.origin != UPDATE_SOURCE:
                break
        else:
            return answer
        if below.status is not RunStatus.ERROR or below.message_id != answer.message_id:
            return answer
        return replace(answer, status=below.status, error=below.error)

    def _decoded(self, key: tuple[str, Head], done: asyncio.Future[FinalAnswer]) -> None:
        if self._decoding.get(key) is done:
            del self._decoding[key]
        if not done.cancelled():
            done.exception()  # retrieved here: every caller may have given up


# A head read without its writes signature: never matches a prefetched row.
_UNKNOWN_WRITES = (-1, -1)
