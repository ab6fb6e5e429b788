"""``python -m EvoScientist.recovery`` as a user runs it: a real process, a real server,
a stream cut by the proxy."""

from __future__ import annotations

import asyncio
import os
import pty
import sys
from collections.abc import Iterator

import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from tests.proxy import Fault, FaultProxy
from tests.servers import DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

CLI = [sys.executable, "-m", "EvoScientist.recovery"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("cli")
    with langgraph_dev(
        root / "work", root / "data", env={"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"}
    ) as dev:
        yield dev


async def run_cli(*args: str, stdout: int | None = asyncio.subprocess.PIPE) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *CLI, *args, stdout=stdout, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode or 0, (out or b"").decode(), err.decode()


async def test_ask_recovers_a_cut_stream(server: DevServer) -> None:
    question = "CLI: how many replicates?"
    # Every reconnect is cut too, so the SDK's own resume gives up and the text shown
    # can only be completed from the checkpoint.
    fault = Fault(kind="cut", after_bytes=3_000, times=None, then_after_bytes=0)
    async with FaultProxy(server.port, fault) as proxy:
        code, out, err = await run_cli(
            "ask", "--url", proxy.url, "--stall-timeout", "3", "--max-wait", "60", question
        )
        assert proxy.stats.fired >= 1
    assert code == 0, err
    assert out == answer_for(question, [notes_for(question)]) + "\n"
    assert "recovered from the checkpoint" in err


async def test_show_prints_a_threads_answer(server: DevServer) -> None:
    question = "CLI: show me"
    code, out, _ = await run_cli("ask", "--url", server.url, question)
    assert code == 0
    sdk = get_client(url=server.url, api_key=None)
    threads = await sdk.threads.search(limit=50)
    await sdk.aclose()
    # The newest thread is the one `ask` just created.
    thread_id = max(threads, key=lambda t: t["created_at"])["thread_id"]
    code, shown, err = await run_cli("show", "--url", server.url, "--wait", "5", thread_id)
    assert code == 0, err
    assert shown == out


async def test_unknown_thread_exits_non_zero_with_one_line(server: DevServer) -> None:
    code, out, err = await run_cli(
        "show", "--url", server.url, "00000000-0000-0000-0000-000000000000"
    )
    assert code == 4
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: thread")


async def test_unreachable_server_exits_non_zero_with_one_line() -> None:
    from tests.servers import free_port

    code, _, err = await run_cli("show", "--url", f"http://127.0.0.1:{free_port()}", "abc")
    assert code == 4
    assert err.count("\n") == 1 and "could not reach" in err


async def test_terminal_redraws_in_place(server: DevServer) -> None:
    question = "CLI on a terminal"
    master, slave = pty.openpty()
    try:
        process = await asyncio.create_subprocess_exec(
            *CLI, "ask", "--url", server.url, question, stdout=slave, stderr=slave
        )
        os.close(slave)
        chunks: list[bytes] = []
        loop = asyncio.get_running_loop()
        while True:
            try:
                data = await loop.run_in_executor(None, os.read, master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert await asyncio.wait_for(process.wait(), 60) == 0
    finally:
        os.close(master)
    screen = b"".join(chunks).decode(errors="replace")
    assert "\x1b[" in screen  # redrawn in place, not appended
    final = answer_for(question, [notes_for(question)])
    assert final.splitlines()[-1] in screen
