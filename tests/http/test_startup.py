"""A server started with a setting it cannot use exits at once, naming it in one line
(a real uvicorn serving the standalone app, and a real ``langgraph dev``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.servers import ANSI_COLOUR, LANGGRAPH, REPO, free_port, write_config

pytestmark = pytest.mark.e2e

BAD = [("EVOSCIENTIST_RUN_SILENCE_SECONDS", "30s"), ("EVOSCIENTIST_RUN_SILENCE_SECONDS", "nan")]
# A sidecar with no server to read (docs/servers/sidecar.md): the standalone app's alone.
STANDALONE_BAD = [*BAD, ("EVOSCIENTIST_READ_FROM", "api")]
# A server that starts despite the value never exits: a failure at any bound. The bound
# only has to outlast a refusal's start-up on a loaded machine (a few seconds alone; over
# 45 s with the suite and three more beside it on 2 cores).
START_TIMEOUT = 120


def server_env(tmp_path: Path, variable: str, value: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOSCIENTIST_")}
    return {
        **env,
        "EVOSCIENTIST_DATA_DIR": str(tmp_path / "data"),
        "LANGSMITH_TRACING": "false",
        variable: value,
    }


def assert_refused(finished: subprocess.CompletedProcess[str], variable: str) -> None:
    output = ANSI_COLOUR.sub("", finished.stdout)
    # 3: uvicorn's status for a failed start-up (langgraph dev runs uvicorn).
    assert finished.returncode == 3, (finished.returncode, output[-2000:])
    named = [line for line in output.splitlines() if variable in line]
    assert named, output[-2000:]
    assert "Traceback" not in output


@pytest.mark.parametrize(("variable", "value"), STANDALONE_BAD)
def test_uvicorn_refuses_to_start(tmp_path: Path, variable: str, value: str) -> None:
    finished = subprocess.run(
        [
            *(sys.executable, "-m", "uvicorn", "evoscientist_final_answer.http.app:app"),
            *("--host", "127.0.0.1", "--port", str(free_port())),
        ],
        cwd=REPO,
        env=server_env(tmp_path, variable, value),
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
    )
    finished.stdout += finished.stderr
    assert_refused(finished, variable)


@pytest.mark.parametrize(("variable", "value"), BAD)
def test_langgraph_dev_refuses_to_start(tmp_path: Path, variable: str, value: str) -> None:
    config = write_config(tmp_path)
    finished = subprocess.run(
        [
            *(str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"),
            *("--port", str(free_port()), "--config", str(config)),
        ],
        cwd=tmp_path,
        env=server_env(tmp_path, variable, value),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=START_TIMEOUT,
    )
    assert_refused(finished, variable)
