"""upstream's ``EvoSci -p`` in server mode while its server is killed (``kill -9``) and
started again mid-answer: with the kit's line it ends as the route says (the whole answer
when the run is run again, an error naming the run, exit 1, when it was lost); without
it, the part it had as the final answer, exit 0, either way.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest

from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import runs_written
from tests.upstream.env import require_upstream_env
from tests.upstream.gateway import (
    JOBS,
    SLOW_TOKEN_S,
    Shot,
    bare_tree,
    final_answer,
    runs_of,
    single_shot,
    thread_asked,
)
from tests.upstream.server import UpstreamServer, upstream_server

QUESTION = "[slow] [long] restart, {}, {}"
MID_ANSWER = 144


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpstreamServer]:
    """upstream's server, killed and started again by each test. langgraph dev writes its
    runs to disk periodically and, restarted, runs again those it had written: the run is
    killed just after such a write to be kept; to be lost, what the server wrote goes
    before it starts again (langgraph.json's ``disable_persistence`` never reaches
    ``langgraph dev``: its config check drops the key)."""
    root = tmp_path_factory.mktemp("gateway-restart")
    env = require_upstream_env()
    with upstream_server(env, root, args=JOBS, SCRIPTED_SLOW_DELAY=SLOW_TOKEN_S) as started:
        yield started


async def _both_through_a_restart(
    server: UpstreamServer, name: str, keep_the_run: bool
) -> tuple[Shot, Shot]:
    """The adopted and the bare CLI at once, each on a thread of its own; the server
    killed and started again once both show ``MID_ANSWER`` characters (and, to keep the
    runs, once it has written them to disk)."""
    env, root = require_upstream_env(), server.workdir.parent
    bare = bare_tree(server)
    shown = {True: asyncio.Event(), False: asyncio.Event()}

    async def one(line: bool, proxy: FaultProxy) -> Shot:
        async def midway(shot: Shot) -> None:
            while len(shot.text) < MID_ANSWER:
                await asyncio.sleep(0.02)
            shown[line].set()

        tree = server.tree if line else bare
        question = QUESTION.format(name, "line" if line else "bare")
        return await single_shot(env, tree, root, proxy.port, question, midway)

    async with (
        FaultProxy(server.port, Fault()) as adopted,
        FaultProxy(server.port, Fault()) as control,
    ):
        shots = asyncio.gather(one(True, adopted), one(False, control))
        both_shown = asyncio.gather(*(event.wait() for event in shown.values()))
        await asyncio.wait([both_shown, shots], return_when=asyncio.FIRST_COMPLETED)
        if shots.done():
            both_shown.cancel()
        else:
            if keep_the_run:
                await runs_written(server)
            await asyncio.to_thread(server.restart, forget_runs=not keep_the_run)
        line, control_shot = await shots
    assert len(line.text) >= MID_ANSWER, line.describe()
    assert len(control_shot.text) >= MID_ANSWER, control_shot.describe()
    return line, control_shot


def _control_printed_its_part(control: Shot) -> None:
    assert control.exit == 0 and control.done is not None, control.describe()
    assert MID_ANSWER <= len(control.done) < 900


def test_a_run_the_restarted_server_runs_again_prints_its_whole_answer(
    server: UpstreamServer,
) -> None:
    line, control = asyncio.run(_both_through_a_restart(server, "kept", keep_the_run=True))

    async def settled() -> tuple[dict, list[dict]]:
        thread_id = await thread_asked(server.url, QUESTION.format("kept", "line"))
        assert thread_id is not None, line.describe()
        return await final_answer(server.url, thread_id), await runs_of(server.url, thread_id)

    answer, runs = asyncio.run(settled())
    assert answer["status"] == "success" and len(answer["content"]) > 900
    assert line.exit == 0, line.describe()
    assert line.done == answer["content"] and line.text == answer["content"], line.describe()
    assert [run["status"] for run in runs] == ["success"]
    _control_printed_its_part(control)


def test_a_run_the_restart_lost_ends_in_an_error_naming_it(server: UpstreamServer) -> None:
    line, control = asyncio.run(_both_through_a_restart(server, "lost", keep_the_run=False))
    assert line.exit == 1, line.describe()
    assert line.done is None, "a partial answer was printed as the final one"
    assert line.error is not None and re.search(r"run \S+ of thread \S+ was lost", line.error)
    _control_printed_its_part(control)
