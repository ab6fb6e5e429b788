"""What the JS tests need from the machine: node ≥ 20, clients/js's npm packages, and
(for the browser tests) Debian's chromium. Missing, a test skips with the reason —
except under CI (``CI=true``), where it fails: CI's .ci/run installs all of them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "clients" / "js"
NODE_MODULES = PACKAGE / "node_modules"
CHROMIUM = Path("/usr/bin/chromium")
MIN_NODE = 20
# Chromium as CI runs it: no sandbox (root), no GPU, nothing that phones home.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing(reason: str) -> None:
    """Skip with ``reason``; under CI, fail with it."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI installs it: .ci/run)", pytrace=False)
    pytest.skip(reason)


def node() -> str:
    """The path of node ≥ 20 with clients/js's packages installed (`make test` runs
    `npm ci` there)."""
    path = shutil.which("node")
    if path is None:
        missing("node (Node.js ≥ 20) is not on PATH")
    assert path is not None
    version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    match = re.match(r"v(\d+)", version.strip())
    if match is None or int(match.group(1)) < MIN_NODE:
        missing(f"node {version.strip() or '?'} is older than {MIN_NODE}")
    if not (NODE_MODULES / ".package-lock.json").exists():
        missing(f"{NODE_MODULES} is not installed: run `npm ci` in {PACKAGE} (make test does)")
    return path


def chromium() -> Path:
    if not CHROMIUM.exists():
        missing(f"{CHROMIUM} is missing: apt-get install chromium")
    return CHROMIUM
