"""``langgraph dev`` servers forked from one process that imported their heavy modules once
(run as ``python -m tests.support.zygote``): a server's start is mostly imports, and the
suite starts dozens. Nothing that reads a server's settings at import (``langgraph_api``)
is imported before the fork.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

# What every server imports, none of it reading the server's environment on import.
PRELOAD = (
    "langchain_core.messages",
    "langchain_core.runnables",
    "langchain_core.language_models",
    "langchain_core.tracers.event_stream",
    "langsmith",
    "langgraph.graph",
    "langgraph.pregel",
    "langgraph.channels.delta",
    "pydantic",
    "uvicorn",
    "starlette.applications",
    "httpx",
    "orjson",
    "structlog",
)
READY = "ready"
REAP_EVERY_S = 0.02


def exit_path(log_path: Path | str) -> Path:
    return Path(f"{log_path}.exit")


def _run_child(request: Mapping[str, object]) -> None:
    """In the forked child: become the server the request describes, then exit. It sets its
    own environment, working directory and log, and runs the ``langgraph`` command's own
    entry point, ``langgraph dev …``, in a session of its own, as a started process would."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
        log = os.open(str(request["log"]), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        sys.argv = [str(arg) for arg in request["argv"]]  # type: ignore[union-attr]
        from langgraph_cli.cli import cli

        try:
            cli()
            code = 0
        except SystemExit as exiting:
            code = exiting.code if isinstance(exiting.code, int) else int(exiting.code is not None)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> None:
    for module in PRELOAD:
        importlib.import_module(module)
    children: dict[int, str] = {}
    out = sys.stdout
    out.write(READY + "\n")
    out.flush()
    stdin = sys.stdin.fileno()
    pending = b""
    while True:
        readable, _, _ = select.select([stdin], [], [], REAP_EVERY_S)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            log = children.pop(pid, None)
            if log is not None:
                exit_path(log).write_text(str(os.waitstatus_to_exitcode(status)))
        if not readable:
            continue
        chunk = os.read(stdin, 65536)
        if not chunk:
            return  # the test process is gone: its servers are its own to stop
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _run_child(request)
            children[pid] = str(request["log"])
            out.write(json.dumps({"pid": pid}) + "\n")
            out.flush()


class ForkedProcess:
    """A server forked by the zygote, as the tests use a ``subprocess.Popen`` (``pid``,
    ``poll``, ``wait``, ``returncode``). The zygote reaps its children and writes each
    one's exit status beside its log (``<log>.exit``), where this reads it."""

    def __init__(self, pid: int, log_path: Path) -> None:
        self.pid = pid
        self.exit_file = exit_path(log_path)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            if self.exit_file.exists() and (text := self.exit_file.read_text()):
                self.returncode = int(text)
            elif not Path(f"/proc/{self.pid}").exists():
                self.returncode = -1  # reaped by someone else: the zygote was gone
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"langgraph dev ({self.pid})", timeout or 0)
            time.sleep(REAP_EVERY_S)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)


class Zygote:
    """This test process's zygote, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.support.zygote"],
                cwd=Path(__file__).resolve().parents[2],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert process.stdout is not None
            ready = process.stdout.readline().strip()
            if ready != READY:
                process.kill()
                raise RuntimeError(f"the server zygote did not start: {ready!r}")
            self._process = process
        return self._process

    def spawn(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], log_path: Path
    ) -> ForkedProcess:
        exit_path(log_path).unlink(missing_ok=True)
        log_path.write_bytes(b"")  # there to read from the first moment, as Popen's is
        request = {"argv": list(argv), "cwd": str(cwd), "env": dict(env), "log": str(log_path)}
        with self._lock:
            process = self._started()
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            answer = json.loads(process.stdout.readline())
        return ForkedProcess(int(answer["pid"]), log_path)


ZYGOTE = Zygote()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the test process's to handle
    main()
