"""Start the standalone app as a sidecar for tests: ``uvicorn
evoscientist_final_answer.http.app:app`` in a process of its own, reading only the API
of the server at ``api_url`` (``EVOSCIENTIST_READ_FROM=api``), as each caller. The
command is the one docs/servers/sidecar.md gives.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.local_http import local_get
from tests.support.servers import NOT_INHERITED, free_port, stop

STARTUP_TIMEOUT = 60.0
# Asked until the app answers it in its own words (a non-UUID id: no API call made).
PROBE = "/api/threads/not-a-uuid/final-answer"


@dataclass
class Sidecar:
    url: str
    api_url: str
    log_path: Path
    process: subprocess.Popen[bytes]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def sidecar(api_url: str, workdir: Path, env: dict[str, str] | None = None) -> Iterator[Sidecar]:
    """The sidecar on a free port of 127.0.0.1, its output in ``workdir``; its data
    directory holds no ``sessions.db`` (the sidecar must not need one)."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    inherited = {
        k: v
        for k, v in os.environ.items()
        if k not in NOT_INHERITED and not k.startswith("EVOSCIENTIST_")
    }
    app_env = {
        **inherited,
        "EVOSCIENTIST_DATA_DIR": str(workdir / "data"),
        "EVOSCIENTIST_READ_FROM": "api",
        "EVOSCIENTIST_LANGGRAPH_URL": api_url,
        **(env or {}),
    }
    argv = [sys.executable, "-m", "uvicorn", "evoscientist_final_answer.http.app:app"]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    log_path = workdir / f"sidecar-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            argv,
            cwd=workdir,
            env=app_env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process, log_path)
        yield Sidecar(url, api_url, log_path, process)
    finally:
        stop(process)


def _wait_until_up(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the sidecar exited early:\n{log_path.read_text()[-4000:]}")
        try:
            response = local_get(url + PROBE, timeout=1.0)
            if response.status_code == 404 and "error" in response.json():
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"the sidecar did not start:\n{log_path.read_text()[-4000:]}")
