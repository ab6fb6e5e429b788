"""upstream's own clients of its server, run for real: ``EvoSci -p … --output-format
stream-json`` (single-shot) and ``EvoSci serve`` (its Signal channel), in server mode
(``EVOSCIENTIST_GATEWAY_BACKEND=langgraph_server``), from an unzip of upstream's wheel
with the kit's patch (the gateway's line in it) or without the gateway's hunk (the
control), talking to upstream's server through a fault proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.local_http import local_client
from tests.upstream.env import UpstreamEnv, require_upstream_env
from tests.upstream.server import GATEWAY, UpstreamServer, adopted_wheel, server_env
from tests.upstream.signal_daemon import SignalDaemon

# The scripted model's pace for ``[slow]`` questions: an answer of ``[long]`` runs some
# 19 s, so a fault, a write of the runs (every 10 s) or a restart lands inside it.
SLOW_TOKEN_S = "0.1"
# Every client's run at once (langgraph dev runs one at a time unless told).
JOBS = ("--n-jobs-per-worker", "10")
# A CLI's start (upstream's imports, its local agent) takes 5-10 s of CPU alone; several
# at once on two loaded cores, and an outage of 20 s, stay well inside this.
CLI_TIMEOUT = 240.0


def bare_tree(server: UpstreamServer) -> Path:
    """The control's tree beside the server's: upstream's wheel with the kit's patch but
    its gateway hunk (made once per server)."""
    tree = server.workdir.parent / "wheel-bare"
    if not tree.exists():
        adopted_wheel(require_upstream_env(), tree.parent, (GATEWAY,), tree.name)
    return tree


def client_env(root: Path, tree: Path, server_port: int, workspace: Path) -> dict[str, str]:
    """A client process's environment: upstream from ``tree``, its server at
    ``server_port`` (the proxy's), execution on that server."""
    env = server_env(
        root / "home",
        root / "data",
        workspace,
        tree,
        EVOSCIENTIST_GATEWAY_BACKEND="langgraph_server",
        EVOSCIENTIST_LANGGRAPH_DEV_PORT=str(server_port),
    )
    env.pop("EVOSCIENTIST_SCRIPTED_MODEL")  # the model runs in the server only
    return env


@dataclass
class Shot:
    """What ``EvoSci -p`` printed: its text events joined, its ``done`` event's
    response, its ``error`` event's text, its exit status and its thread."""

    text: str = ""
    done: str | None = None
    error: str | None = None
    exit: int | None = None
    stderr: str = ""
    events: list[dict] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"exit {self.exit}, {len(self.text)} chars shown, done={self.done is not None}, "
            f"error={self.error!r}; stderr tail: {self.stderr[-1500:]}"
        )


async def single_shot(
    env: UpstreamEnv,
    tree: Path,
    root: Path,
    port: int,
    question: str,
    on_text: Callable[[Shot], Awaitable[None]] | None = None,
) -> Shot:
    """``EvoSci -p question --output-format stream-json`` against the server at
    ``port``; ``on_text(shot)`` once the answer has begun (the test's fault then). It
    works in the server's workspace (the server refuses runs for folders it does not
    serve); ``thread_asked`` finds its thread."""
    workspace = root / "workspace"
    process = await asyncio.create_subprocess_exec(
        str(env.root / "bin" / "EvoSci"),
        "-p",
        question,
        "--output-format",
        "stream-json",
        cwd=workspace,
        env=client_env(root, tree, port, workspace),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    shot = Shot()
    fault: asyncio.Task[None] | None = None

    async def read() -> None:
        nonlocal fault
        assert process.stdout is not None
        async for line in process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            shot.events.append(event)
            kind = event.get("type")
            if kind == "text":
                shot.text += event.get("content", "")
                if fault is None and on_text is not None:
                    fault = asyncio.create_task(on_text(shot))
            elif kind == "done":
                shot.done = event.get("response")
            elif kind == "error":
                shot.error = event.get("content") or event.get("message") or json.dumps(event)

    try:
        assert process.stderr is not None
        _, stderr = await asyncio.wait_for(
            asyncio.gather(read(), process.stderr.read()), CLI_TIMEOUT
        )
        shot.exit = await process.wait()
        shot.stderr = stderr.decode(errors="replace")
        if fault is not None:
            await fault
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return shot


async def thread_asked(server_url: str, question: str, within: float = 60.0) -> str | None:
    """The thread whose first question is ``question``: read in its values, which are
    listed once a run of it ended (a run the CLI left running is waited for), or in
    its last run's input (a run cancelled before it wrote a checkpoint)."""
    deadline = asyncio.get_running_loop().time() + within
    async with local_client(server_url) as http:
        while True:
            found = []
            for thread in (await http.post("/threads/search", json={"limit": 1000})).json():
                asked = _first_question(thread.get("values"))
                if asked is None and thread.get("status") == "idle":
                    runs = (await http.get(f"/threads/{thread['thread_id']}/runs")).json()
                    asked = (
                        _first_question((runs[-1].get("kwargs") or {}).get("input"))
                        if runs
                        else None
                    )
                if asked == question:
                    found.append(thread["thread_id"])
            if found or asyncio.get_running_loop().time() > deadline:
                return found[0] if len(found) == 1 else None
            await asyncio.sleep(0.5)


def _first_question(values: object) -> str | None:
    messages = values.get("messages") if isinstance(values, dict) else None
    first = messages[0] if isinstance(messages, list) and messages else None
    return first.get("content") if isinstance(first, dict) else None


async def runs_of(server_url: str, thread_id: str) -> list[dict]:
    async with local_client(server_url) as http:
        response = await http.get(f"/threads/{thread_id}/runs")
        response.raise_for_status()
        return response.json()


async def final_answer(server_url: str, thread_id: str, run_id: str | None = None) -> dict:
    """The route's answer once the run is complete."""
    params = {"wait": "30", **({"run_id": run_id} if run_id else {})}
    async with local_client(server_url, timeout=60) as http:
        response = await http.get(f"/api/threads/{thread_id}/final-answer", params=params)
        response.raise_for_status()
        return response.json()


@contextlib.asynccontextmanager
async def serving(
    env: UpstreamEnv, tree: Path, root: Path, port: int, daemon: SignalDaemon
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``EvoSci serve`` with its Signal channel on ``daemon``, against the server at
    ``port``, until the block ends; its log in ``root / "serve.log"``."""
    config = root / "home" / ".config" / "evoscientist"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yaml").write_text(
        "channel_enabled: signal\n"
        f"signal_phone_number: '{daemon.account}'\n"
        f"signal_rpc_port: {daemon.port}\n"
    )
    workspace = root / "workspace"
    with (root / "serve.log").open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            str(env.root / "bin" / "EvoSci"),
            "serve",
            "--auto-approve",
            cwd=workspace,
            env=client_env(root, tree, port, workspace),
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            yield process
        finally:
            if process.returncode is None:
                process.terminate()
                try:
                    await asyncio.wait_for(process.wait(), 20)
                except TimeoutError:
                    process.kill()
                    await process.wait()
