"""Our store maintenance offered to upstream as a mixin (docs/upstream-adoption.md),
tested on upstream's own saver class in the upstream environment: upstream's saver has
no ``adelete_for_runs`` (langgraph-api's rollback of a cancelled run raises on it), and
with ``SqliteMaintenance`` mixed in it rolls back, copies and prunes while keeping its
own stamps."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.upstream.env import require_upstream_env

SCRIPT = Path(__file__).resolve().parent / "scripts" / "saver_maintenance.py"


def test_mixin_on_upstreams_saver(tmp_path: Path) -> None:
    env = require_upstream_env()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("EVOSCIENTIST_")} | {
        "HOME": str(tmp_path),
        "EVOSCIENTIST_DATA_DIR": str(tmp_path),
        "EVOSCIENTIST_WORKSPACE_DIR": str(workspace),
    }
    done = subprocess.run(
        [str(env.python), str(SCRIPT), str(tmp_path)],
        capture_output=True,
        text=True,
        env=child_env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    assert seen["plain_adelete_for_runs"] == "NotImplementedError"  # upstream as shipped
    turns = [f"question r{i}" for i in range(3)]
    assert seen["three_turns"] == [t for q in turns for t in (q, f"answer to {q}")]
    assert seen["after_rollback"] == seen["three_turns"][:4]
    assert seen["turn_after_rollback"] == [
        *seen["three_turns"][:4],
        "question r3",
        "answer to question r3",
    ]
    assert seen["copy"] == seen["turn_after_rollback"]
    assert seen["after_prune"] == seen["turn_after_rollback"]
    assert seen["checkpoints_after_prune"] < seen["checkpoints_before_prune"]
