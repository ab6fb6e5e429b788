"""A server view's facts, fetched for a read only when the verdict needs them, and once
(``server.view.ThreadFacts``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import pytest

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.run_liveness import Rules
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.server.view import ServerView

RULES = Rules(shared_store=False, silence_bound=60.0)


class Counted(ServerView):
    """A view answering fixed facts, counting the questions."""

    def __init__(
        self, *, runs_here: bool, status: str | None = None, owners: frozenset[str] = frozenset()
    ) -> None:
        self.runs_here = runs_here
        self.status = status
        self.owners = owners
        self.asked: list[str] = []

    async def thread_status(self, thread_id: str) -> str | None:
        self.asked.append("status")
        return self.status

    async def runs(self, thread_id: str, writer_run_id: str | None) -> Mapping[str, str] | None:
        self.asked.append("runs")
        return {}

    async def busy_elsewhere(self, thread_id: str) -> bool:
        self.asked.append("busy")
        return False

    async def run_owners(self, thread_id: str) -> set[str]:
        self.asked.append("owners")
        return set(self.owners)


def answer(status: RunStatus) -> FinalAnswer:
    return FinalAnswer(
        "thread-1",
        status,
        run_id="run-1",
        graph_id="EvoScientist",
        updated_at="2000-01-01T00:00:00+00:00",  # silent for ever
    )


async def test_a_finished_checkpoint_on_an_idle_thread_asks_nothing_more() -> None:
    view = Counted(runs_here=True, status="idle")
    facts = view.facts("thread-1")
    await facts.status()
    assert (await facts.judge(answer(RunStatus.SUCCESS), None, RULES)).status is RunStatus.SUCCESS
    assert view.asked == ["status"]


async def test_each_fact_is_fetched_once_per_read() -> None:
    """The re-read after a race judges the new checkpoint by the same facts."""
    view = Counted(runs_here=True, status="busy")
    facts = view.facts("thread-1")
    for _ in range(2):
        await facts.status()
        await facts.judge(answer(RunStatus.RUNNING), None, RULES)
    assert view.asked == ["status", "runs"]
    # The next read asks again.
    await view.facts("thread-1").judge(answer(RunStatus.RUNNING), None, RULES)
    assert view.asked == ["status", "runs", "runs"]


async def test_a_fallback_is_asked_only_for_a_run_silent_past_the_bound() -> None:
    view = Counted(runs_here=False)
    facts = view.facts("thread-1")
    await facts.judge(answer(RunStatus.SUCCESS), None, RULES)
    assert view.asked == []
    lost = await facts.judge(answer(RunStatus.RUNNING), None, RULES)
    await facts.judge(answer(RunStatus.RUNNING), None, RULES)
    assert lost.error is not None and lost.error["code"] == "run_lost"
    assert view.asked == ["busy"]


async def test_a_checkpoint_the_verdict_ended_is_read_again() -> None:
    """The server's runs say the run ended, its checkpoint (read before them) does not:
    the newer checkpoint answers, judged by the same facts."""
    view = Counted(runs_here=True, status="idle")
    checkpoints = [answer(RunStatus.RUNNING), answer(RunStatus.SUCCESS)]
    reads = 0

    async def read() -> FinalAnswer:
        nonlocal reads
        reads += 1
        return checkpoints[min(reads, len(checkpoints)) - 1]

    stored, judged = await view.facts("thread-1").judged(read, None, RULES)
    assert reads == 2
    assert stored.status is RunStatus.SUCCESS and judged.status is RunStatus.SUCCESS
    assert view.asked == ["runs"]


async def test_a_checkpoint_the_verdict_leaves_open_is_read_once() -> None:
    view = Counted(runs_here=False)
    reads = 0

    async def read() -> FinalAnswer:
        nonlocal reads
        reads += 1
        return answer(RunStatus.SUCCESS)

    stored, judged = await view.facts("thread-1").judged(read, None, RULES)
    assert reads == 1 and stored == judged


async def stored_here() -> bool:
    return True


async def not_stored_here() -> bool:
    return False


@pytest.mark.parametrize(
    ("view", "user_id", "stored", "held"),
    [
        # The server running the thread does not know it: nowhere else to read it.
        (Counted(runs_here=True, status=None), None, not_stored_here, False),
        (Counted(runs_here=True, status="busy"), None, not_stored_here, True),
        # A fallback API may hold any thread.
        (Counted(runs_here=False), None, not_stored_here, True),
        # Another user's: its checkpoints are here, or its runs were all started by others.
        (Counted(runs_here=False), "bob", stored_here, False),
        (Counted(runs_here=False, owners=frozenset({"alice"})), "bob", not_stored_here, False),
        (Counted(runs_here=False, owners=frozenset({"bob"})), "bob", not_stored_here, True),
        (Counted(runs_here=False), "bob", not_stored_here, True),
    ],
)
async def test_a_thread_the_store_lacks_may_be_held_elsewhere(
    view: Counted, user_id: str | None, stored: Callable[[], Awaitable[bool]], held: bool
) -> None:
    assert await view.facts("thread-1").held_elsewhere(user_id, stored) is held
