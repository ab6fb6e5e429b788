"""upstream's own gateway (``LangGraphServerGateway``) keeps its answer through a cut with
the kit's one line: upstream's real ``EvoSci -p`` and ``EvoSci serve`` against its real
server, a real proxy between; without the line (the control) it prints what it had.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.proxy import Fault, FaultProxy
from tests.upstream.env import require_upstream_env
from tests.upstream.gateway import (
    JOBS,
    SLOW_TOKEN_S,
    Shot,
    bare_tree,
    final_answer,
    runs_of,
    serving,
    single_shot,
    thread_asked,
)
from tests.upstream.server import UpstreamServer, upstream_server
from tests.upstream.signal_daemon import SignalDaemon

# An answer of some 950 characters (~19 s: gateway.SLOW_TOKEN_S), cut once this much
# shows (the table cut at 144 of 942).
QUESTION = "[slow] [long] {}"
MID_ANSWER = 144
OUTAGE_S = 20.0
# serve's Signal channel waits out its own ack reaction (10 s, upstream's channel awaits
# the reply in the loop that reads it) before each message.
SERVE_REPLY_S = 120.0

Fault_ = Callable[[FaultProxy], Awaitable[None]]


async def _mid_answer(shot: Shot) -> None:
    while len(shot.text) < MID_ANSWER:
        await asyncio.sleep(0.02)


def _cut(proxy: FaultProxy) -> Callable[[Shot], Awaitable[None]]:
    async def fault(shot: Shot) -> None:
        await _mid_answer(shot)
        assert proxy.cut_open() > 0

    return fault


def _outage(proxy: FaultProxy) -> Callable[[Shot], Awaitable[None]]:
    async def fault(shot: Shot) -> None:
        await _mid_answer(shot)
        proxy.outage(OUTAGE_S)

    return fault


@dataclass(frozen=True)
class Case:
    name: str
    line: bool
    proxy_fault: Fault | None = None
    midway: Callable[[FaultProxy], Callable[[Shot], Awaitable[None]]] | None = None


LOST_START = Fault("lose-response", times=1, match=("/commands",))
CASES = (
    Case("no fault", True),
    Case("cut, re-opens let through", True, midway=_cut),
    Case("outage of 20 s", True, midway=_outage),
    Case("run.start's response lost", True, LOST_START),
    Case("control: outage of 20 s", False, midway=_outage),
    Case("control: run.start's response lost", False, LOST_START),
)


@dataclass
class Outcome:
    shot: Shot
    answer: dict
    runs: list[dict]
    fired: int


@dataclass
class Served:
    replies: list[list[str]]
    answers: list[dict]
    runs: list[dict]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpstreamServer]:
    root = tmp_path_factory.mktemp("gateway")
    env = require_upstream_env()
    with upstream_server(env, root, args=JOBS, SCRIPTED_SLOW_DELAY=SLOW_TOKEN_S) as started:
        yield started


async def _single_shot(server: UpstreamServer, bare: Path, case: Case) -> Outcome:
    env = require_upstream_env()
    tree = server.tree if case.line else bare
    root, question = server.workdir.parent, QUESTION.format(case.name)
    async with FaultProxy(server.port, case.proxy_fault or Fault()) as proxy:
        on_text = case.midway(proxy) if case.midway else None
        shot = await single_shot(env, tree, root, proxy.port, question, on_text)
    thread_id = await thread_asked(server.url, question)
    assert thread_id is not None, shot.describe()
    answer = await final_answer(server.url, thread_id)
    return Outcome(shot, answer, await runs_of(server.url, thread_id), proxy.stats.fired)


async def _serve(server: UpstreamServer) -> Served:
    """Two questions to ``serve`` (one thread), the second through the outage."""
    env = require_upstream_env()
    root = server.workdir.parent
    async with (
        SignalDaemon() as daemon,
        FaultProxy(server.port, Fault()) as proxy,
        serving(env, server.tree, root, proxy.port, daemon) as process,
    ):
        await daemon.connected(120, process)
        thread_id = _serve_thread(root)
        replies = []
        for n, question in enumerate(("serve, first", QUESTION.format("serve, second"))):
            sent = len(daemon.texts())
            await daemon.say(question)
            if n == 1:
                await _answering(server.url, thread_id, runs=2)
                proxy.outage(OUTAGE_S)
            texts = await daemon.replied(
                lambda t, sent=sent: any("Done, final." in x for x in t[sent:]), SERVE_REPLY_S
            )
            replies.append(texts[sent:])
    runs = await runs_of(server.url, thread_id)
    answers = [await final_answer(server.url, thread_id, run["run_id"]) for run in reversed(runs)]
    return Served(replies, answers, runs)


async def _answering(url: str, thread_id: str, runs: int) -> None:
    """Until the thread's ``runs``-th run is mid-answer. The channel sends whole replies
    only, so the clock places the outage: the answer's text begins about a second into
    the run (its reasoning first) and runs some 19 s; four seconds in, it is under way."""
    while len(listed := await runs_of(url, thread_id)) < runs or listed[0]["status"] != "running":
        await asyncio.sleep(0.1)
    await asyncio.sleep(4.0)


def _serve_thread(root: Path) -> str:
    for line in (root / "serve.log").read_text(errors="replace").splitlines():
        if line.startswith("Thread: "):
            return line.removeprefix("Thread: ").strip()
    raise AssertionError("serve logged no thread")


@pytest.fixture(scope="module")
def outcomes(server: UpstreamServer) -> tuple[dict[str, Outcome], Served]:
    """Every case at once, each on a thread of its own (a CLI's start costs seconds of CPU):
    single-shot with the line under no fault, a cut whose re-opens get through, a 20 s
    outage from mid-answer, and a lost ``run.start`` response; the same outage and lost
    response without the line; and ``serve`` with the line, two questions on its one
    thread, the second through the outage."""
    bare = bare_tree(server)

    async def everything() -> tuple[dict[str, Outcome], Served]:
        *shots, served = await asyncio.gather(
            *(_single_shot(server, bare, case) for case in CASES), _serve(server)
        )
        return {case.name: shot for case, shot in zip(CASES, shots, strict=True)}, served

    return asyncio.run(everything())


@pytest.mark.parametrize("case", [case.name for case in CASES if case.line])
def test_single_shot_prints_the_routes_answer(
    case: str, outcomes: tuple[dict[str, Outcome], Served]
) -> None:
    """With the line, ``EvoSci -p`` prints exactly the route's answer, exit 0, one run
    per prompt, none cancelled, whatever broke between it and its server."""
    outcome = outcomes[0][case]
    shot, answer = outcome.shot, outcome.answer
    assert shot.exit == 0, shot.describe()
    assert answer["status"] == "success" and answer["complete"]
    assert len(answer["content"]) > 900
    assert shot.done == answer["content"], shot.describe()
    assert shot.text == answer["content"], shot.describe()
    assert [run["status"] for run in outcome.runs] == ["success"]
    if case != "no fault":
        assert outcome.fired, "the fault never fired"


def test_control_an_outage_prints_a_truncated_answer_as_final(
    outcomes: tuple[dict[str, Outcome], Served],
) -> None:
    """Without the line, the outage leaves ``EvoSci -p`` printing what it had as the
    final answer, exit 0, while the server finishes the run."""
    outcome = outcomes[0]["control: outage of 20 s"]
    shot = outcome.shot
    assert shot.exit == 0, shot.describe()
    assert shot.done is not None and MID_ANSWER <= len(shot.done) < len(outcome.answer["content"])
    assert outcome.answer["content"].startswith(shot.done)
    assert [run["status"] for run in outcome.runs] == ["success"]


def test_control_a_lost_start_response_cancels_the_run(
    outcomes: tuple[dict[str, Outcome], Served],
) -> None:
    """Without the line, a lost ``run.start`` response is an error, exit 1, and the CLI
    cancels the run the server had started."""
    outcome = outcomes[0]["control: run.start's response lost"]
    assert outcome.shot.exit == 1, outcome.shot.describe()
    assert outcome.shot.error and outcome.shot.text == ""
    assert [run["status"] for run in outcome.runs] == ["interrupted"]


def test_serve_replies_each_question_with_its_own_answer(
    outcomes: tuple[dict[str, Outcome], Served],
) -> None:
    """``serve`` (one thread for every message) with the line: each question gets its
    own run's answer, the second through the outage. Without the line the second got
    the first's answer: a thread stream replays every run the server holds for the
    thread, and the SDK's subscription ends at the first one's end."""
    served = outcomes[1]
    assert [run["status"] for run in served.runs] == ["success", "success"]
    for replies, answer in zip(served.replies, served.answers, strict=True):
        assert answer["status"] == "success"
        assert "".join(replies).strip() == answer["content"].strip()
    assert served.answers[0]["content"] != served.answers[1]["content"]
