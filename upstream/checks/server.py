"""Upstream EvoScientist's own checks on the kit's server patch: the 0.3.8 sdist's tree
unchanged (the control) and with ``upstream/evoscientist.patch`` applied, side by side.

Each tree gets what upstream runs: its pytest suite (test by test: the sdist lacks
``tests/conftest.py`` and ``tests/fakes/``, so many tests error in both trees, and the
patch must turn no passing test into a failing one), ruff check and ruff format on the
files the patch touches, ``pip check`` of the environment, and upstream's own launcher
(``start_langgraph_dev``, what ``EvoSci`` runs): does its server expose ``location`` to a
local page and answer the route. Prints a markdown table; exits 1 when the patched tree
fails a check the control passes, or a test that passes unchanged.

    .venv/bin/python upstream/checks/server.py [--work .upstream-checks]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PATCH = REPO / "upstream" / "evoscientist.patch"
VERSION = "0.3.8"
TEST_TOOLS = ("pytest>=8", "pytest-asyncio>=1", "pytest-timeout>=2.4", "pytest-xdist>=3.6", "ruff")
ROUTE = "/api/threads/00000000-0000-4000-8000-000000000000/final-answer"
LOCAL_PAGE = "http://localhost:3000"


def run(
    *argv: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, check=check, capture_output=True, text=True
    )


def environment(work: Path) -> Path:
    """A venv with upstream from the package index, this distribution beside it (the
    patched gateway imports it) and upstream's test tools; kept between runs."""
    venv = work / "server-venv"
    stamp = venv / ".ready"
    if not stamp.exists():
        shutil.rmtree(venv, ignore_errors=True)
        run(sys.executable, "-m", "venv", venv)
        pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet"]
        constraints = ["-c", REPO / "constraints-upstream.txt"]
        run(*pip, *constraints, f"evoscientist=={VERSION}", *TEST_TOOLS)
        run(*pip, *constraints, REPO)
        stamp.touch()
    return venv


def sdist_tree(work: Path, venv: Path, name: str) -> Path:
    """A fresh tree of upstream's sdist at ``work / name``."""
    download = work / "sdist"
    if not list(download.glob(f"evoscientist-{VERSION}.tar.gz")):
        run(
            venv / "bin" / "python",
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"evoscientist=={VERSION}",
            "-d",
            download,
        )
    tree = work / name
    shutil.rmtree(tree, ignore_errors=True)
    with tarfile.open(next(download.glob(f"evoscientist-{VERSION}.tar.gz"))) as archive:
        archive.extractall(work / f"{name}-unpacked", filter="data")
    (work / f"{name}-unpacked" / f"evoscientist-{VERSION}").rename(tree)
    shutil.rmtree(work / f"{name}-unpacked")
    return tree


def patched_files() -> list[str]:
    return re.findall(r"^\+\+\+ b/(\S+)", PATCH.read_text(), re.MULTILINE)


@dataclass
class Column:
    rows: dict[str, str] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)  # test id → passed/failed/error/skipped
    ok: dict[str, bool] = field(default_factory=dict)


def pytest_outcomes(venv: Path, tree: Path, work: Path) -> tuple[dict[str, str], str]:
    report = work / f"{tree.name}-junit.xml"
    scratch = scratch_copy(tree, work)
    env = {**os.environ, "PYTHONPATH": str(scratch), "HOME": str(fresh_home(work, tree.name))}
    env.pop("VIRTUAL_ENV", None)
    started = time.monotonic()
    run(
        venv / "bin" / "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        f"--junitxml={report}",
        "tests",
        cwd=scratch,
        env=env,
        check=False,
    )
    outcomes: dict[str, str] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        outcomes[name] = next((k for k in ("error", "failure", "skipped") if k in kinds), "passed")
    counts = {
        k: sum(1 for v in outcomes.values() if v == k)
        for k in ("passed", "failure", "error", "skipped")
    }
    summary = (
        f"{counts['passed']} passed, {counts['failure']} failed, {counts['error']} errors, "
        f"{counts['skipped']} skipped ({time.monotonic() - started:.0f} s)"
    )
    return outcomes, summary


def fresh_home(work: Path, name: str) -> Path:
    """An empty home for one pytest run: upstream's tests leave files in theirs."""
    home = work / f"{name}-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    return home


def scratch_copy(tree: Path, work: Path) -> Path:
    """A copy of ``tree`` to run tests in: upstream's tests leave files where they run."""
    scratch = work / f"{tree.name}-scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(tree, scratch)
    return scratch


def alone_passes(venv: Path, tree: Path, test: str, work: Path) -> bool:
    """Whether ``test`` (``classname::name`` as the JUnit report names it) passes alone,
    in a fresh copy of ``tree`` with a fresh home."""
    classname, _, name = test.partition("::")
    parts = classname.split(".")
    found = next(
        i
        for i in range(len(parts), 0, -1)
        if (tree / "/".join(parts[:i])).with_suffix(".py").exists()
    )
    node = "::".join(["/".join(parts[:found]) + ".py", *parts[found:], name])
    scratch = scratch_copy(tree, work)
    env = {**os.environ, "PYTHONPATH": str(scratch), "HOME": str(fresh_home(work, tree.name))}
    alone = run(
        venv / "bin" / "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        node,
        cwd=scratch,
        env=env,
        check=False,
    )
    return alone.returncode == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


LAUNCH = """
import sys
from pathlib import Path
from EvoScientist.langgraph_dev import manager
process = manager.start_langgraph_dev(Path(sys.argv[2]), port=int(sys.argv[1]), host="127.0.0.1")
print("UP", flush=True)
sys.stdin.read()
manager.stop_langgraph_dev(process)
"""


def launched(venv: Path, tree: Path, work: Path) -> tuple[str, str]:
    """upstream's launcher serving ``tree``: what CORS exposes to a local page, and what
    the route answers."""
    home = work / f"{tree.name}-launch"
    shutil.rmtree(home, ignore_errors=True)
    (home / "workspace").mkdir(parents=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "EVOSCIENTIST_DATA_DIR": str(home / "data"),
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    port = free_port()
    launcher = subprocess.Popen(
        [str(venv / "bin" / "python"), "-c", LAUNCH, str(port), str(home / "workspace")],
        cwd=home / "workspace",
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert launcher.stdout is not None
        said = []
        while not said or not said[-1].startswith("UP"):
            line = launcher.stdout.readline()
            if not line:
                return "", f"the launcher exited: {''.join(said)[-400:]}"
            said.append(line)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{ROUTE}", headers={"Origin": LOCAL_PAGE}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, headers, body = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, headers, body = error.code, error.headers, error.read()
        exposed = headers.get("access-control-expose-headers") or ""
        code = (json.loads(body).get("error") or {}).get("code") if body.startswith(b"{") else None
        return exposed, f"{status} {code or ''}".strip()
    finally:
        if launcher.stdin is not None:
            launcher.stdin.close()
        try:
            launcher.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(launcher.pid, signal.SIGKILL)


def column(venv: Path, tree: Path, work: Path) -> Column:
    result = Column()
    result.outcomes, result.rows["pytest (upstream's suite)"] = pytest_outcomes(venv, tree, work)
    files = [name for name in patched_files() if name.endswith(".py")]
    lint = run(venv / "bin" / "ruff", "check", *files, cwd=tree, check=False)
    result.ok["ruff check"] = lint.returncode == 0
    result.rows["ruff check (the patched files)"] = "clean" if lint.returncode == 0 else _last(lint)
    fmt = run(venv / "bin" / "ruff", "format", "--check", *files, cwd=tree, check=False)
    result.ok["ruff format"] = fmt.returncode == 0
    result.rows["ruff format --check (the patched files)"] = (
        "clean" if fmt.returncode == 0 else _last(fmt)
    )
    exposed, answer = launched(venv, tree, work)
    has_location = "location" in [h.strip().lower() for h in exposed.split(",")]
    result.ok["location exposed"] = has_location
    result.rows["upstream's launcher: CORS exposes `location`"] = (
        "yes" if has_location else f"no ({exposed or 'nothing'})"
    )
    result.ok["route answers"] = answer == "404 thread_not_found"
    result.rows["upstream's launcher: the route (unknown thread)"] = answer
    return result


def _last(process: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (process.stdout + process.stderr).splitlines() if line.strip()]
    return lines[-1] if lines else f"exit {process.returncode}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=REPO / ".upstream-checks")
    work = parser.parse_args().work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    venv = environment(work)
    pip_check = run(venv / "bin" / "python", "-m", "pip", "check", check=False)
    control_tree = sdist_tree(work, venv, "server-unchanged")
    patched_tree = sdist_tree(work, venv, "server-patched")
    run(
        "git",
        "apply",
        PATCH,
        cwd=patched_tree,
        env={**os.environ, "GIT_CEILING_DIRECTORIES": str(work)},
    )
    control, patched = column(venv, control_tree, work), column(venv, patched_tree, work)
    differing = sorted(
        t
        for t, o in control.outcomes.items()
        if o == "passed" and patched.outcomes.get(t) != "passed"
    )
    # Upstream's suite is not deterministic (timing, state one test leaves for the next):
    # a test that passed unchanged and failed patched is the patch's doing only if, run
    # alone, it fails patched and passes unchanged, twice each.
    broken = [
        t
        for t in differing
        if not any(alone_passes(venv, patched_tree, t, work) for _ in range(2))
        and all(alone_passes(venv, control_tree, t, work) for _ in range(2))
    ]
    rows = [
        ("`git apply upstream/evoscientist.patch`", "-", f"applies ({len(patched_files())} files)"),
        (
            "`pip check` (upstream + this distribution)",
            "-",
            "clean" if pip_check.returncode == 0 else _last(pip_check),
        ),
        *((name, control.rows[name], patched.rows[name]) for name in patched.rows),
        (
            "tests that passed unchanged and failed patched",
            "-",
            f"{len(differing)}, none of them the patch's (alone, each passes or fails "
            "alike in both trees)"
            if not broken
            else f"{len(differing)}, {len(broken)} the patch's (below)",
        ),
    ]
    print(
        f"Upstream EvoScientist {VERSION}, its sdist's tree: unchanged and with the kit's patch\n"
    )
    print("| check | unchanged | patched |\n|---|---|---|")
    for name, before, after in rows:
        print(f"| {name} | {before} | {after} |")
    for test in broken:
        print(f"- failing because of the patch: {test}")
    regressions = [
        name for name, ok in patched.ok.items() if not ok and control.ok.get(name, False)
    ]
    failed = bool(broken or regressions or pip_check.returncode or not all(patched.ok.values()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
