"""Start a real ``langgraph dev`` for tests: free port, temp data dir, its own config.

The config is written with absolute paths into a temp working directory, so the
server's ``.langgraph_api`` scratch files and the ``sessions.db`` it writes stay out of
the repository.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from langgraph_sdk import get_client
from starlette.types import ASGIApp

from tests.support.local_http import local_get
from tests.support.zygote import ZYGOTE

REPO = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
STARTUP_TIMEOUT = 90.0
# Settings a developer's shell may hold that would send a test server elsewhere; pass
# them in ``env`` to use them (e.g. the scale-out tests' EVOSCIENTIST_DATABASE_URI).
NOT_INHERITED = frozenset({"EVOSCIENTIST_DATABASE_URI"})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_config(
    workdir: Path,
    *,
    checkpointer: bool = True,
    http: bool = True,
    extra_graphs: dict[str, str] | None = None,
    auth: dict[str, Any] | None = None,
    app: str | None = None,
    checkpointer_path: str | None = None,
) -> Path:
    """A ``langgraph.json`` like the repository's, optionally without our checkpointer
    (then langgraph dev keeps checkpoints in its own in-memory store: a non-SQLite
    deployment, where the route must answer through the API), or without our routes
    (an older server, as a new WebUI may meet one), or with ``auth`` (langgraph.json's
    ``auth`` section, e.g. ``{"path": ".../auth_handler.py:auth"}``), which also sets
    ``http.enable_custom_route_auth`` so our routes take the same credentials.
    ``app``: another ``http.app`` (``module:attr``); ``checkpointer_path``: another
    checkpointer factory (a repo-relative ``file:attr``) in place of ours."""
    repo_config = json.loads((REPO / "langgraph.json").read_text())
    config = {
        "dependencies": [str(REPO)],
        "graphs": {
            name: str(REPO / spec.removeprefix("./"))
            for name, spec in repo_config["graphs"].items()
        },
    }
    for name, spec in (extra_graphs or {}).items():  # repo-relative file:attr specs
        config["graphs"][name] = str(REPO / spec)
    if http:
        config["http"] = repo_config["http"]
        if app is not None:
            config["http"] = {**config["http"], "app": app}
    if auth is not None:
        config["auth"] = auth
        config["http"] = {**config.get("http", {}), "enable_custom_route_auth": True}
    if checkpointer:
        path = checkpointer_path or repo_config["checkpointer"]["path"].removeprefix("./")
        config["checkpointer"] = {"path": str(REPO / path)}
    path = workdir / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


@dataclass
class DevServer:
    url: str
    port: int
    data_dir: Path
    workdir: Path
    log_path: Path
    process: subprocess.Popen[bytes]

    @property
    def sessions_db(self) -> Path:
        return self.data_dir / "sessions.db"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


# langgraph dev serves on another port when the one asked for is taken (another test
# process's server may have just bound it), and says so in its log.
PORT_FALLBACK = re.compile(r"Port (\d+) is already in use, using port (\d+) instead")
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def wait_until_up(
    port: int, process: subprocess.Popen[bytes], log_path: Path, *, fixed: bool = False
) -> int:
    """The port the server answers on, once its own banner names it and ``/ok``
    answers there (so a request never reaches another test's server). ``fixed``: a
    fallback to another port is an error (a restart must come back on its port)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"langgraph dev exited early:\n{log_path.read_text()[-4000:]}")
        log = ANSI_COLOUR.sub("", log_path.read_text(errors="replace"))
        if (moved := PORT_FALLBACK.search(log)) and int(moved[1]) == port:
            if fixed:
                raise RuntimeError(f"port {port} was taken; langgraph dev moved to {moved[2]}")
            port = int(moved[2])
        if f"API: http://127.0.0.1:{port}" in log:
            try:
                if local_get(f"http://127.0.0.1:{port}/ok", timeout=1.0).status_code == 200:
                    return port
            except httpx.HTTPError:
                pass
        time.sleep(0.2)
    raise RuntimeError(f"langgraph dev did not start:\n{log_path.read_text()[-4000:]}")


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)


@contextmanager
def langgraph_dev(
    workdir: Path,
    data_dir: Path,
    *,
    checkpointer: bool = True,
    http: bool = True,
    extra_graphs: dict[str, str] | None = None,
    auth: dict[str, Any] | None = None,
    port: int | None = None,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
    app: str | None = None,
    checkpointer_path: str | None = None,
) -> Iterator[DevServer]:
    """``args``: more ``langgraph dev`` options (e.g. ``--n-jobs-per-worker 10``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    config = write_config(
        workdir,
        checkpointer=checkpointer,
        http=http,
        extra_graphs=extra_graphs,
        auth=auth,
        app=app,
        checkpointer_path=checkpointer_path,
    )
    fixed = port is not None
    port = port or free_port()
    log_path = workdir / f"langgraph-dev-{port}.log"
    inherited = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    server_env = {
        **inherited,
        "EVOSCIENTIST_DATA_DIR": str(data_dir),
        "EVOSCIENTIST_MODEL": "offline",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        **(env or {}),
    }
    process = start_langgraph_dev(LANGGRAPH, config, port, args, workdir, server_env, log_path)
    try:
        port = wait_until_up(port, process, log_path, fixed=fixed)
        url = f"http://127.0.0.1:{port}"
        yield DevServer(url, port, data_dir, workdir, log_path, process)
    finally:
        stop(process)


def start_langgraph_dev(
    langgraph: Path,
    config: Path,
    port: int,
    args: Sequence[str],
    cwd: Path,
    env: dict[str, str],
    log_path: Path,
) -> subprocess.Popen[bytes]:
    """``langgraph dev`` on ``port`` (no browser, no reload), its output in ``log_path``,
    in a session of its own so that ``stop`` ends it with everything it started. This
    environment's own ``langgraph`` is forked from the test process's zygote (its
    imports made once: tests/support/zygote.py); another environment's is started."""
    argv = ["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--config", str(config), *args]
    if langgraph == LANGGRAPH:
        return ZYGOTE.spawn(["langgraph", *argv], cwd, env, log_path)  # type: ignore[return-value]
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [str(langgraph), *argv],
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


# langgraph dev keeps its runs in memory and writes them here every 10 s
# (langgraph_runtime_inmem/_persistence.py): a run written there outlives a crash, and the
# restarted server runs it again; one not yet written is lost with the process.
RUNS_FILE = Path(".langgraph_api") / ".langgraph_ops.pckl"
FLUSH_EVERY_S = 10.0


async def runs_written(server: DevServer) -> None:
    """Until the server next writes its runs to disk (at most ``FLUSH_EVERY_S`` on)."""
    path = server.workdir / RUNS_FILE

    def written() -> int:
        return path.stat().st_mtime_ns if path.exists() else 0

    before = written()
    deadline = time.monotonic() + FLUSH_EVERY_S + 5
    while written() == before:
        assert time.monotonic() < deadline, f"{path} not written in {FLUSH_EVERY_S + 5} s"
        await asyncio.sleep(0.05)


async def new_thread(url: str) -> str:
    """A thread created through ``url``'s langgraph API."""
    client = get_client(url=url, api_key=None)
    try:
        return (await client.threads.create())["thread_id"]
    finally:
        await client.aclose()


@asynccontextmanager
async def listening(app: ASGIApp, **options: Any) -> AsyncIterator[int]:
    """``app`` behind a real uvicorn on a local port, in this event loop; ``options``:
    more of uvicorn's settings (``timeout_keep_alive=...``)."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        await task
