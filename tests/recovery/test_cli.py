"""``python -m evoscientist_final_answer.recovery`` as a user runs it: a real process, a real
server, a stream cut by the proxy."""

from __future__ import annotations

import argparse
import asyncio
import os
import pty
import sys
from collections.abc import Iterator

import pytest
from langgraph_sdk import get_client

from EvoScientist.offline_model import answer_for, notes_for
from evoscientist_final_answer.recovery.cli import parser
from tests.support.proxy import Fault, FaultProxy
from tests.support.servers import DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

CLI = [sys.executable, "-m", "evoscientist_final_answer.recovery"]


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


def printed_thread(err: str) -> str:
    """The thread id ``ask`` printed on stderr."""
    (line,) = [line for line in err.splitlines() if line.startswith("thread: ")]
    return line.removeprefix("thread: ")


async def test_ask_prints_the_thread_it_created_for_show(server: DevServer) -> None:
    question = "CLI: show me"
    code, out, err = await run_cli("ask", "--url", server.url, question)
    assert code == 0, err
    thread_id = printed_thread(err)
    sdk = get_client(url=server.url, api_key=None)
    try:
        assert (await sdk.threads.get(thread_id))["thread_id"] == thread_id
    finally:
        await sdk.aclose()
    code, shown, err = await run_cli("show", "--url", server.url, "--wait", "5", thread_id)
    assert code == 0, err
    assert shown == out


async def test_ask_thread_continues_a_thread(server: DevServer) -> None:
    code, _, err = await run_cli("ask", "--url", server.url, "CLI: first turn?")
    assert code == 0, err
    thread_id = printed_thread(err)
    second = "CLI: second turn?"

    code, out, err = await run_cli("ask", "--url", server.url, "--thread", thread_id, second)

    assert code == 0, err
    assert printed_thread(err) == thread_id
    assert out == answer_for(second, [notes_for(second)]) + "\n"
    sdk = get_client(url=server.url, api_key=None)
    try:
        state = await sdk.threads.get_state(thread_id)
    finally:
        await sdk.aclose()
    humans = [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]
    assert humans == ["CLI: first turn?", second]


async def test_unknown_thread_exits_non_zero_with_one_line(server: DevServer) -> None:
    code, out, err = await run_cli(
        "show", "--url", server.url, "00000000-0000-0000-0000-000000000000"
    )
    assert code == 4
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: thread")


async def test_unreachable_server_exits_non_zero_with_one_line() -> None:
    from tests.support.servers import free_port

    code, _, err = await run_cli("show", "--url", f"http://127.0.0.1:{free_port()}", "abc")
    assert code == 4
    assert err.count("\n") == 1 and "could not reach" in err


# ------------------------------------------------------------------ --help


def formatted_help(*args: str) -> str:
    root = parser()
    if not args:
        return root.format_help()
    commands = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices[args[0]].format_help()


def option_help(text: str, option: str) -> str:
    """The help of ``option``: its line and the indented lines after it, joined."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(option))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(" " * 10) or line.strip().startswith("-"):
            break
        block.append(line)
    return " ".join(" ".join(block).split())


@pytest.mark.parametrize(
    ("command", "option", "words"),
    [
        ("ask", "--url", ["default", "$EVOSCIENTIST_URL", "http://127.0.0.1:2024"]),
        ("ask", "--assistant", ["default: EvoScientist"]),
        ("ask", "--thread", ["default: a new one", "stderr"]),
        ("ask", "--max-wait", ["default: 240 seconds"]),
        ("ask", "--stall-timeout", ["default: 15 seconds"]),
        ("show", "--url", ["default", "$EVOSCIENTIST_URL", "http://127.0.0.1:2024"]),
        ("show", "--wait", ["default: 0 seconds"]),
        ("show", "--run-id", ["default: the thread's latest turn"]),
    ],
)
def test_help_describes_each_option_with_default_and_unit(
    command: str, option: str, words: list[str]
) -> None:
    described = option_help(formatted_help(command), option)
    for word in words:
        assert word in described, described


@pytest.mark.parametrize("command", [(), ("ask",), ("show",)])
def test_help_lists_the_exit_codes_without_rest_markup(command: tuple[str, ...]) -> None:
    text = formatted_help(*command)
    assert "exit codes:" in text
    for code in range(5):
        assert f"\n  {code}  " in text
    assert "`" not in text


def test_the_url_default_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parser().parse_args(["show", "t"]).url == "http://127.0.0.1:2024"
    monkeypatch.setenv("EVOSCIENTIST_URL", "http://127.0.0.1:2124")
    assert parser().parse_args(["show", "t"]).url == "http://127.0.0.1:2124"
    assert parser().parse_args(["ask", "q"]).url == "http://127.0.0.1:2124"
    assert parser().parse_args(["ask", "--url", "http://h:1", "q"]).url == "http://h:1"


async def test_python_m_help_names_itself() -> None:
    code, out, err = await run_cli("--help")
    assert code == 0, err
    assert out.startswith("usage: python -m evoscientist_final_answer.recovery ")
    code, out, _ = await run_cli("ask", "--help")
    assert out.startswith("usage: python -m evoscientist_final_answer.recovery ask ")
    assert "evosci-answer" not in out


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
