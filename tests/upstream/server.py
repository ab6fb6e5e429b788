"""upstream EvoScientist's own server, adopted with the kit's patch
(``upstream/evoscientist.patch``) on a clean unzip of the release's wheel, and started
with the upstream environment's ``langgraph dev`` from that tree; its model factory
returns a scripted chat model (``site/sitecustomize.py``), so no key or network is needed.
"""

from __future__ import annotations

import base64
import compileall
import contextlib
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.servers import (
    RUNS_FILE,
    DevServer,
    free_port,
    start_langgraph_dev,
    stop,
    wait_until_up,
)
from tests.upstream.env import REPO, UPSTREAM_VERSION, UpstreamEnv

PATCH = REPO / "upstream" / "evoscientist.patch"
SITE = Path(__file__).resolve().parent / "site"
HTTP_APP = "EvoScientist/langgraph_dev/http.py"
CONFIG = "EvoScientist/langgraph_dev/langgraph.json"
GATEWAY = "EvoScientist/gateway/server.py"
ADOPTED = (HTTP_APP, CONFIG, "EvoScientist/langgraph_dev/boundary.py", GATEWAY)
RECORD = f"evoscientist-{UPSTREAM_VERSION}.dist-info/RECORD"
# What sitecustomize logs once upstream's package is imported in the server.
LAUNCH = Path(__file__).resolve().parent / "scripts" / "launch.py"
LAUNCHED = re.compile(r"^PID (?P<pid>\d+) LOG (?P<log>.+)$")
IMPORTED_FROM = re.compile(r"^upstream EvoScientist imported from (.+)$", re.MULTILINE)
# Settings of ours a developer's shell may hold: the route must find upstream's store
# untold, so none of them reaches the server.
_OURS = re.compile(r"^EVOSCIENTIST_")


def sha256_of(path: Path) -> str:
    """A file's hash as a wheel RECORD writes it (``sha256=<urlsafe b64, unpadded>``)."""
    digest = hashlib.sha256(path.read_bytes()).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def record(path: Path) -> list[tuple[str, str]]:
    """``(path, hash)`` rows of a wheel RECORD (the RECORD's own row has no hash)."""
    with path.open(newline="") as file:
        return [(row[0], row[1]) for row in csv.reader(file) if row]


def unzip_wheel(env: UpstreamEnv, root: Path, name: str = "wheel") -> Path:
    """A clean unzip of upstream's wheel at ``root / name``; its root folder."""
    tree = root / name
    with zipfile.ZipFile(env.wheel) as wheel:
        wheel.extractall(tree)
    return tree


def apply_adoption(tree: Path, without: Sequence[str] = ()) -> None:
    """The kit's patch applied to ``tree``, but for the files ``without`` names. Raises
    if it does not apply cleanly."""
    excluded = [f"--exclude={name}" for name in without]
    if shutil.which("patch") and not without:  # a second opinion: a reader may use either
        subprocess.run(
            ["patch", "-p1", "--dry-run", "--batch", "--forward", "-i", str(PATCH)],
            cwd=tree,
            check=True,
            capture_output=True,
        )
    # Above ``tree`` git looks for no repository: inside one (a TMPDIR in a checkout),
    # ``git apply`` would take paths as the repository's and skip these.
    git_env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tree.parent)}
    subprocess.run(
        ["git", "apply", "--verbose", *excluded, str(PATCH)],
        cwd=tree,
        env=git_env,
        check=True,
        capture_output=True,
    )


def changed_from_record(tree: Path) -> list[str]:
    """Every file of ``tree`` that differs from the wheel's RECORD: changed, missing
    or not listed."""
    rows = record(tree / RECORD)
    listed = {name for name, _ in rows}
    changed = [
        name
        for name, digest in rows
        if digest and (not (tree / name).is_file() or sha256_of(tree / name) != digest)
    ]
    extra = [
        path.relative_to(tree).as_posix()
        for path in tree.rglob("*")
        if path.is_file() and path.relative_to(tree).as_posix() not in listed
    ]
    return sorted(changed + extra)


def adopted_wheel(
    env: UpstreamEnv, root: Path, without: Sequence[str] = (), name: str = "wheel"
) -> Path:
    """upstream's wheel unzipped at ``root / name`` with the kit's patch applied (but
    for the files ``without`` names), checked to differ from the wheel in the patched
    files only; the tree's root.

    The wheel is the file the package index serves, kept by ``make upstream-env``; the
    patch goes in with ``git apply`` (``patch -p1 --dry-run`` must agree where ``patch``
    exists), and the tree must then match the wheel's RECORD in every file but the ones the
    patch names. The server runs from that tree, first on its ``PYTHONPATH``, with the
    tree's own ``EvoScientist/langgraph_dev/langgraph.json`` as upstream ships it."""
    tree = unzip_wheel(env, root, name)
    apply_adoption(tree, without)
    changed = changed_from_record(tree)
    expected = sorted(name for name in ADOPTED if name not in without)
    if changed != expected:
        raise AssertionError(f"the adopted unzip differs from the wheel in {changed}")
    # Bytecode once here: under PYTHONDONTWRITEBYTECODE the server and every CLI run
    # from the tree would each compile what they import of it from source again.
    compileall.compile_dir(tree, quiet=1, workers=0)
    return tree


def server_env(
    home: Path, data_dir: Path, workspace: Path, tree: Path, **extra: str
) -> dict[str, str]:
    """The server's environment: ``tree`` (the adopted unzip) first on its path, so
    upstream's package imports from it, not from the environment's site-packages."""
    env = {k: v for k, v in os.environ.items() if not _OURS.match(k)}
    env.pop("PYTHONPATH", None)
    return {
        **env,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "EVOSCIENTIST_DATA_DIR": str(data_dir),
        "EVOSCIENTIST_WORKSPACE_DIR": str(workspace),
        "EVOSCIENTIST_SCRIPTED_MODEL": "1",
        "EVOSCIENTIST_ONE_DELETE_AT_A_TIME": "1",
        "PYTHONPATH": os.pathsep.join((str(tree), str(SITE))),
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        **extra,
    }


@dataclass
class Launched:
    """upstream's server as upstream's own launcher started it (``scripts/launch.py``):
    the launcher, which stops the server when its stdin closes, and the server's
    process group."""

    launcher: subprocess.Popen[bytes]
    server_pid: int
    log_path: Path

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """``SIGKILL``: the server killed first (a crash); else the launcher stops it."""
        if sig == signal.SIGKILL:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.server_pid, signal.SIGKILL)
        if self.launcher.stdin is not None:
            self.launcher.stdin.close()
        try:
            self.launcher.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.launcher.kill()
            self.launcher.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.server_pid, signal.SIGKILL)


def launch(env: UpstreamEnv, port: int, workspace: Path, variables: dict[str, str]) -> Launched:
    """upstream's server on ``port``, started by upstream's launcher."""
    launcher = subprocess.Popen(
        [str(env.python), str(LAUNCH), str(port), str(workspace)],
        cwd=workspace,
        env={**variables, "PATH": os.pathsep.join((str(env.root / "bin"), variables["PATH"]))},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert launcher.stdout is not None
    said = []
    for line in launcher.stdout:
        said.append(line.decode(errors="replace"))
        if found := LAUNCHED.match(said[-1]):
            return Launched(launcher, int(found["pid"]), Path(found["log"]))
    launcher.wait(timeout=30)
    raise RuntimeError(f"upstream's launcher did not start its server:\n{''.join(said)}")


@dataclass
class UpstreamServer(DevServer):
    """upstream's server, which ``restart`` kills and starts again on its port, as it
    was started (by ``langgraph dev`` itself, or by upstream's launcher)."""

    upstream: UpstreamEnv | None = None
    config: Path = Path()
    args: Sequence[str] = ()
    env: dict[str, str] | None = None
    tree: Path = Path()
    launched: Launched | None = None

    def restart(self, sig: int = signal.SIGKILL, *, forget_runs: bool = False) -> None:
        """The server killed by ``sig`` (its in-memory runs and event buffers gone with
        it) and started again on its port, with its data, config and tree.
        ``forget_runs``: what it last wrote of its runs and threads to disk (every 10 s)
        goes too, as if it had written nothing since they began."""
        self.stop(sig)
        if forget_runs:
            (self.workdir / RUNS_FILE).unlink(missing_ok=True)
        self.start(again=True)

    def start(self, *, again: bool = False) -> None:
        assert self.upstream is not None
        variables = self.env or {}
        if self.launched is not None:
            self.launched = launch(self.upstream, self.port, self.workdir, variables)
            self.process, self.log_path = self.launched.launcher, self.launched.log_path
            return
        log_path = (
            self.log_path.with_name(f"{self.log_path.stem}-again.log") if again else self.log_path
        )
        self.process = start_langgraph_dev(
            self.upstream.langgraph,
            self.config,
            self.port,
            self.args,
            self.workdir,
            variables,
            log_path,
        )
        self.log_path = log_path
        self.port = wait_until_up(self.port, self.process, log_path, fixed=again)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.launched is not None:
            self.launched.stop(sig)
        else:
            stop(self.process, sig)


@contextmanager
def upstream_server(
    env: UpstreamEnv,
    root: Path,
    *,
    args: Sequence[str] = (),
    checkpointer: str | None = None,
    http_app: str | None = None,
    launcher: bool = False,
    **extra_env: str,
) -> Iterator[UpstreamServer]:
    """upstream's adopted server on a free port, served from the adopted unzip; its
    data, config and workspace under ``root``; ``args``: more ``langgraph dev`` options;
    ``extra_env`` for the scripted model's delays and the like; ``checkpointer``: another
    ``checkpointer.path`` than upstream's (the maintenance test's factory), written into
    the tree's config after the RECORD check, the one change beyond the diff;
    ``http_app``: likewise another ``http.app`` (the bench's host floor, which serves
    upstream's own app behind two routes of its own); ``launcher``: started by upstream's
    own launcher, as ``EvoSci`` starts it (its CORS from ``boundary.py``, which
    langgraph-api prefers over ``langgraph.json``'s), not by ``langgraph dev`` itself."""
    home, data_dir, workspace = root / "home", root / "data", root / "workspace"
    for folder in (home, data_dir, workspace):
        folder.mkdir(parents=True, exist_ok=True)
    tree = adopted_wheel(env, root)
    config = tree / CONFIG
    if checkpointer is not None or http_app is not None:
        settings = json.loads(config.read_text())
        if checkpointer is not None:
            settings["checkpointer"]["path"] = checkpointer
        if http_app is not None:
            settings["http"]["app"] = http_app
        config.write_text(json.dumps(settings, indent=4))
    port = free_port()
    variables = server_env(home, data_dir, workspace, tree, **extra_env)
    if launcher:
        launched = launch(env, port, workspace, variables)
        process, log_path = launched.launcher, launched.log_path
    else:
        launched = None
        log_path = root / f"langgraph-dev-{port}.log"
        process = start_langgraph_dev(
            env.langgraph, config, port, args, workspace, variables, log_path
        )
    server = UpstreamServer(
        f"http://127.0.0.1:{port}",
        port,
        data_dir,
        workspace,
        log_path,
        process,
        env,
        config,
        args,
        variables,
        tree,
        launched,
    )
    try:
        if launched is None:
            server.port = wait_until_up(port, process, log_path)
            server.url = f"http://127.0.0.1:{server.port}"
        yield server
    finally:
        server.stop()


def imported_from(server: DevServer) -> Path:
    """Where the server's interpreter imported upstream's ``EvoScientist`` package from
    (``site/sitecustomize.py`` logs it)."""
    found = IMPORTED_FROM.search(server.log())
    if found is None:
        raise AssertionError("the server logged no import of upstream's package")
    return Path(found.group(1))
