"""One read (``http.read.Reads``): the store first, the API when the store cannot answer
(never for another user's thread), a failure that names the store's reason, a deadline
instead of a hang, and whether the server lags a checkpoint that looks finished."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

import pytest

from evoscientist_final_answer.answer.result import FinalAnswer, Source
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.http.read import Reads
from evoscientist_final_answer.server.view import NoServer, ServerView
from evoscientist_final_answer.store.errors import (
    CheckpointUnreadable,
    StoreUnavailable,
    ThreadNotFound,
)

THREAD = "thread-1"
RUN = "run-1"


def answer(status: RunStatus, source: Source = "checkpointer") -> FinalAnswer:
    return FinalAnswer(THREAD, status, content="the answer", run_id=RUN, source=source)


class Fixed:
    """A reader that answers ``outcome`` (or raises it), counting its reads."""

    def __init__(self, outcome: FinalAnswer | Exception, *, holds: bool = False) -> None:
        self.outcome = outcome
        self.holds = holds
        self.reads = 0

    async def read(
        self, thread_id: str, run_id: str | None = None, *, user_id: str | None = None
    ) -> FinalAnswer:
        self.reads += 1
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome

    async def holds_thread(self, thread_id: str) -> bool:
        return self.holds


class Slow(Fixed):
    async def read(
        self, thread_id: str, run_id: str | None = None, *, user_id: str | None = None
    ) -> FinalAnswer:
        await asyncio.sleep(10)
        raise AssertionError("not reached")


class Busy(ServerView):
    """The server running the thread, holding its run as running."""

    runs_here = True

    async def thread_status(self, thread_id: str) -> str | None:
        return "busy"

    async def runs(self, thread_id: str, writer_run_id: str | None) -> Mapping[str, str] | None:
        return {RUN: "running"}


def reads(direct: Fixed | None, api: Fixed | None, server: ServerView | None = None) -> Reads:
    return Reads(
        direct,
        api,
        NoServer() if server is None else server,
        deadline=1.0,
        shared_store=False,
        silence_bound=60.0,
    )


async def test_the_store_answers_and_the_api_is_not_asked() -> None:
    direct, api = Fixed(answer(RunStatus.SUCCESS)), Fixed(answer(RunStatus.SUCCESS, "api"))
    got, lags = await reads(direct, api).now(THREAD, None)
    assert got.source == "checkpointer" and not lags
    assert (direct.reads, api.reads) == (1, 0)


async def test_a_store_that_cannot_read_falls_back_to_the_api(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    direct = Fixed(StoreUnavailable("locked"))
    got, lags = await reads(direct, Fixed(answer(RunStatus.SUCCESS, "api"))).now(THREAD, None)
    assert got.source == "api" and not lags
    assert "direct read failed (locked); answered through the API" in caplog.text


async def test_when_both_fail_the_stores_reason_is_kept() -> None:
    direct = Fixed(CheckpointUnreadable("a damaged blob"))
    with pytest.raises(CheckpointUnreadable, match="a damaged blob; the API failed too: down"):
        await reads(direct, Fixed(StoreUnavailable("down"))).now(THREAD, None)


async def test_a_thread_the_store_lacks_is_read_through_the_api() -> None:
    direct = Fixed(ThreadNotFound(THREAD))
    got, _ = await reads(direct, Fixed(answer(RunStatus.SUCCESS, "api"))).now(THREAD, None)
    assert got.source == "api"
    with pytest.raises(ThreadNotFound):
        await reads(direct, None).now(THREAD, None)


async def test_another_users_thread_is_not_asked_of_the_api() -> None:
    """Its checkpoints are in the store, none of them this user's: not found, at once."""
    direct, api = Fixed(ThreadNotFound(THREAD), holds=True), Fixed(answer(RunStatus.SUCCESS))
    with pytest.raises(ThreadNotFound):
        await reads(direct, api).now(THREAD, None, user_id="bob")
    assert api.reads == 0


async def test_no_store_and_no_api_is_unavailable() -> None:
    with pytest.raises(StoreUnavailable, match="no store configured"):
        await reads(None, None).now(THREAD, None)


async def test_a_read_past_its_deadline_is_unavailable() -> None:
    with pytest.raises(StoreUnavailable, match="no store answered within 1s"):
        await reads(Slow(answer(RunStatus.SUCCESS)), None).now(THREAD, None)


async def test_a_finished_checkpoint_the_server_still_runs_lags() -> None:
    got, lags = await reads(Fixed(answer(RunStatus.SUCCESS)), None, Busy()).now(THREAD, None)
    assert not got.complete and lags
