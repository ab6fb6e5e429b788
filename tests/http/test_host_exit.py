"""A host that adopts the routes without a lifespan exits once it stops
(``http/loop_services.py``): what the routes opened (aiosqlite's worker thread, the
PostgreSQL pool, the long-polls' watches) is closed when the event loop that opened it
ends. Real processes, on both backends: a uvicorn (or hypercorn) stopped with SIGINT, and
``asyncio.run`` of an httpx ``ASGITransport`` client as a user's test would write it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.local_http import local_get
from tests.support.seeds import Seeder, route
from tests.support.servers import REPO, free_port

pytestmark = pytest.mark.backends("sqlite", "postgres")

ROUTE_ONLY_APP = "EvoScientist.langgraph_dev.http:app"  # as upstream adopts the routes
COMPLETE_APP = "evoscientist_final_answer.http.app:app"  # with its own lifespan
ADDED_AT_MOST = 1.0  # seconds the route may add to its host's exit after SIGINT
EXIT_WITHIN = 20.0  # an interpreter that waits on a thread never exits: a failure
SCRIPT_WITHIN = 120.0  # a script that never reaches its end: a failure too

# What a script's interpreter still waits on once its ``asyncio.run`` returned (a closed
# connection's worker thread ends a moment after its close returned).
THREADS_LEFT = """
others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
for thread in others:
    thread.join(timeout=5)
print("left alive:", [t.name for t in others if t.is_alive()], flush=True)
"""

IN_PROCESS = (
    """
import asyncio, importlib, sys, threading
import httpx

module, _, name = sys.argv[1].partition(":")
app = getattr(importlib.import_module(module), name)

async def main() -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://host") as client:
        plain = await client.get(sys.argv[2])
        held = await client.get(sys.argv[2], params={"wait": 1, "format": "text"})
        print("answered", plain.status_code, held.status_code, held.text, flush=True)

asyncio.run(main())
"""
    + THREADS_LEFT
)


# A test suite on one loop that builds the routes' app per test and drops it.
APPS_DROPPED = (
    """
import asyncio, gc, sys, threading
import httpx
from starlette.applications import Starlette
from evoscientist_final_answer import final_answer_routes

async def main() -> None:
    for _ in range(2):
        app = Starlette(routes=final_answer_routes())
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://host") as client:
            held = await client.get(sys.argv[1], params={"wait": 1, "format": "text"})
            print("answered", held.status_code, held.text, flush=True)
        del app, transport, client
        await asyncio.sleep(0.1)  # the request's own tasks end (its disconnect watch)
        gc.collect()
        await asyncio.sleep(0.2)  # the dropped routes close their service meanwhile
        open_threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
        print("open while the loop runs:", open_threads, flush=True)

asyncio.run(main())
"""
    + THREADS_LEFT
)


def host_env(seeder: Seeder) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOSCIENTIST_")}
    if seeder.store.backend == "postgres":
        env["EVOSCIENTIST_DATABASE_URI"] = seeder.store.uri
    else:
        env["EVOSCIENTIST_DATA_DIR"] = str(seeder.db_path.parent)
    return env


def run_script(script: str, seeder: Seeder, *args: str) -> subprocess.CompletedProcess[str]:
    """``script`` in an interpreter of its own, as a user's program; a failure when that
    interpreter does not exit within ``EXIT_WITHIN`` of its script's end (its last line,
    ``THREADS_LEFT``'s). Getting there is bounded apart, by ``SCRIPT_WITHIN``: it imports
    the host's app, which took over 20 s once in a fresh clone's CI, several interpreters
    compiling the new venv's modules at once on 2 cores, and failed as a hang."""
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", script, *args],
            cwd=REPO,
            env=host_env(seeder),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        assert process.stdout is not None
        too_long = threading.Timer(SCRIPT_WITHIN, process.kill)
        too_long.start()
        lines: list[str] = []
        try:
            for line in process.stdout:
                lines.append(line)
                if line.startswith("left alive:"):
                    break
        finally:
            too_long.cancel()
        try:
            process.wait(timeout=EXIT_WITHIN)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            pytest.fail(
                f"the interpreter did not exit within {EXIT_WITHIN} s of its script's end:"
                f" {''.join(lines)!r}"
            )
        lines.append(process.stdout.read())
        stderr.seek(0)
        return subprocess.CompletedProcess(
            process.args, process.returncode, "".join(lines), stderr.read()
        )


async def seeded_path(seeder: Seeder) -> str:
    thread = await seeder.chat(["the answer"])
    return route(thread.thread_id)


def serve_command(server: str, app: str, port: int) -> list[str]:
    if server == "hypercorn":
        return [sys.executable, "-m", "hypercorn", app, "--bind", f"127.0.0.1:{port}"]
    return [sys.executable, "-m", "uvicorn", app, "--port", str(port), "--log-level", "info"]


class Host:
    """One server process of ``app``, its output in a log file."""

    def __init__(self, server: str, app: str, env: dict[str, str], log: Path) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                serve_command(server, app, port),
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_until_serving(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            try:
                local_get(f"{self.base}/api/openapi.json", timeout=1)
                return
            except httpx.TransportError:
                assert self.process.poll() is None, self.log.read_text()
                assert time.monotonic() < deadline, self.log.read_text()
                time.sleep(0.05)

    def seconds_to_exit(self, stopped: float) -> float:
        try:
            self.process.wait(timeout=EXIT_WITHIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still alive {EXIT_WITHIN} s after SIGINT:\n{self.log.read_text()}")
        return time.monotonic() - stopped

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.mark.parametrize(
    ("server", "app"),
    [("uvicorn", ROUTE_ONLY_APP), ("uvicorn", COMPLETE_APP), ("hypercorn", ROUTE_ONLY_APP)],
)
async def test_a_server_is_gone_soon_after_sigint(
    seeder: Seeder, server: str, app: str, tmp_path: Path
) -> None:
    """Gone as soon as the same host that never served the route, stopped beside it.

    A host's own exit is mostly its interpreter's teardown of langgraph's modules: 0.6 s
    on a quiet 2-core machine, over 2 s while the rest of the suite loads it. So the
    route's cost is measured against a control under the same load, not against a
    clock. What it guards against takes far longer than ``ADDED_AT_MOST``: aiosqlite's
    thread held the interpreter forever, and a connection left open holds hypercorn
    for its 3 s graceful timeout and uvicorn until it closes.
    """
    path = await seeded_path(seeder)
    env = host_env(seeder)
    served = Host(server, app, env, tmp_path / f"{server}-served.log")
    control = Host(server, app, env, tmp_path / f"{server}-control.log")
    try:
        served.wait_until_serving()
        control.wait_until_serving()
        async with httpx.AsyncClient(base_url=served.base, timeout=10) as client:
            assert (await client.get(path)).json()["content"] == "the answer"
            held = await client.get(path, params={"wait": 1, "format": "text"})
            assert held.text == "the answer"
        served.process.send_signal(signal.SIGINT)
        control.process.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        served_exit = served.seconds_to_exit(stopped)
        control_exit = control.seconds_to_exit(stopped)
        assert served_exit <= control_exit + ADDED_AT_MOST, (
            f"gone {served_exit:.2f} s after SIGINT, the control {control_exit:.2f} s:\n"
            + served.log.read_text()
        )
    finally:
        served.kill()
        control.kill()


@pytest.mark.parametrize("app", [ROUTE_ONLY_APP, COMPLETE_APP])
async def test_asyncio_run_with_an_asgi_client_exits(seeder: Seeder, app: str) -> None:
    path = await seeded_path(seeder)
    finished = run_script(IN_PROCESS, seeder, app, path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "answered 200 200 the answer" in finished.stdout, finished.stderr[-3000:]
    assert "left alive: []" in finished.stdout
    assert "was deleted before being closed" not in finished.stderr
    assert "Task was destroyed" not in finished.stderr


async def test_apps_dropped_while_their_loop_runs_on_are_closed_when_it_ends(
    seeder: Seeder,
) -> None:
    """What a dropped app's routes opened is closed once they are collected, while
    their loop runs on (one app per test, on a suite's one loop, must not pile up
    connections and threads), and the task that would close it at the loop's end is not
    destroyed while pending, closing nothing."""
    path = await seeded_path(seeder)
    finished = run_script(APPS_DROPPED, seeder, path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished.stdout.count("answered 200 the answer") == 2, finished.stdout
    assert finished.stdout.count("open while the loop runs: []") == 2, finished.stdout
    assert "left alive: []" in finished.stdout
    assert "Task was destroyed" not in finished.stderr, finished.stderr[-3000:]
