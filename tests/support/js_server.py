"""Start a real LangGraph JavaScript server for tests: ``langgraphjs dev`` on tests/jsserver,
which mounts the route as its ``http.app`` as a user's project does, beside the contract
graph. Each server gets a project directory of its own, so no two share state and the
repository stays clean. ``make install`` runs ``npm ci`` in tests/jsserver.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support import jstools
from tests.support.servers import NOT_INHERITED, REPO, DevServer, free_port, stop

PROJECT = REPO / "tests" / "jsserver"
LANGGRAPHJS = PROJECT / "node_modules" / ".bin" / "langgraphjs"
COPIED = ("package.json", "tsconfig.json", ".gitignore")
CONFIG = "langgraph.json"
# The same project with its custom auth handler (tests/jsserver/src/auth.ts).
AUTH_CONFIG = "langgraph.auth.json"
LINKED = ("src", "node_modules")
STARTUP_TIMEOUT = 90.0
# The server's own line once it listens (its banner names the port before it binds).
LISTENING = "Server running at 127.0.0.1:{port}"
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
PORT_TAKEN = "EADDRINUSE"
PORT_TRIES = 3


@dataclass
class JsServer(DevServer):
    """A ``DevServer`` whose ``data_dir`` is its ``.langgraph_api``; ``startup_s``: from
    spawn to ``GET /info`` answering 200."""

    startup_s: float = 0.0


def installed() -> None:
    """Skip (fail under CI) unless node ≥ 20 and tests/jsserver's packages are there."""
    jstools.node()
    if not LANGGRAPHJS.exists():
        jstools.missing(f"{PROJECT}/node_modules is not installed: run `npm ci` there (make test)")


def _project(workdir: Path, config: str) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        shutil.copy(PROJECT / name, workdir / name)
    shutil.copy(PROJECT / config, workdir / CONFIG)
    for name in LINKED:
        link = workdir / name
        if not link.is_symlink():
            link.symlink_to(PROJECT / name, target_is_directory=True)


def _wait_until_up(port: int, process: subprocess.Popen[bytes], log_path: Path) -> None:
    """Until this process says it listens on ``port`` and ``/info`` answers 200 there
    (so a request never reaches another test's server on a port this one failed to
    bind; ``/info`` is the one route a custom auth handler does not guard)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    listening = LISTENING.format(port=port)
    while time.monotonic() < deadline:
        log = ANSI_COLOUR.sub("", log_path.read_text(errors="replace"))
        if process.poll() is not None or PORT_TAKEN in log:
            raise _Exited(log[-4000:], port_taken=PORT_TAKEN in log)
        if listening in log:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/info", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
        time.sleep(0.05)
    raise RuntimeError(f"langgraphjs dev did not start:\n{log_path.read_text()[-4000:]}")


class _Exited(RuntimeError):
    def __init__(self, log: str, *, port_taken: bool) -> None:
        super().__init__(f"langgraphjs dev exited early:\n{log}")
        self.port_taken = port_taken


@contextmanager
def js_server(
    workdir: Path, env: dict[str, str] | None = None, *, config: str = CONFIG
) -> Iterator[JsServer]:
    """``langgraphjs dev`` on a free port of 127.0.0.1, in a project of its own in
    ``workdir``, no browser, no reload, no analytics and no tracing; its output in
    ``workdir/langgraphjs-dev-<port>.log``; in a session of its own, stopped with
    everything it started (SIGTERM, then SIGKILL) at exit. ``env``: more of the
    server's environment; ``config``: the project's langgraph.json to serve
    (``AUTH_CONFIG``: with its auth handler)."""
    _project(workdir, config)
    inherited = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    server_env = {
        **inherited,
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "BROWSER": "none",
        **(env or {}),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # always: the CLI would post usage otherwise
    }
    for attempt in range(PORT_TRIES):
        port = free_port()
        log_path = workdir / f"langgraphjs-dev-{port}.log"
        argv = [str(LANGGRAPHJS), "dev", "--port", str(port), "--host", "127.0.0.1"]
        argv += ["--no-browser", "--no-reload"]
        started = time.monotonic()
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                argv,
                cwd=workdir,
                env=server_env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            _wait_until_up(port, process, log_path)
        except _Exited as exited:
            _stop_all(process)
            if exited.port_taken and attempt + 1 < PORT_TRIES:
                # Another process bound the port between free_port and listen: start
                # afresh on another (this server does not move to one of its own).
                shutil.rmtree(workdir / ".langgraph_api", ignore_errors=True)
                continue
            raise
        except BaseException:
            _stop_all(process)
            raise
        break
    startup_s = time.monotonic() - started
    try:
        url = f"http://127.0.0.1:{port}"
        data_dir = workdir / ".langgraph_api"
        yield JsServer(url, port, data_dir, workdir, log_path, process, startup_s)
    finally:
        _stop_all(process)


def _stop_all(process: subprocess.Popen[bytes]) -> None:
    """``stop``, and then whatever is left of the session's group (the CLI may have
    exited before the server it spawned)."""
    stop(process)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
