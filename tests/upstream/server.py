"""upstream EvoScientist 0.3.8's own server, adopted as ``docs/upstream-adoption.md``
says, started with the upstream environment's ``langgraph dev``.

The adoption is applied to copies: upstream's ``http.py`` and ``langgraph.json`` are
copied out of the installed wheel and the document's own diff is applied to them with
``git apply``, so the test proves the diff a reader copies. The copy's ``http.app`` then
names the copied ``http.py`` by its path (upstream, editing its file in place, keeps
``EvoScientist.langgraph_dev.http:app``). Graphs, checkpointer, CORS and the boundary
stay upstream's. The only other difference is the model: upstream's model factory
returns a scripted chat model (``site/sitecustomize.py``), so no key or network is needed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.support.servers import DevServer, free_port, stop, wait_until_up
from tests.upstream.env import REPO, UpstreamEnv

ADOPTION_DOC = REPO / "docs" / "upstream-adoption.md"
SITE = Path(__file__).resolve().parent / "site"
ADOPTED = ("EvoScientist/langgraph_dev/http.py", "EvoScientist/langgraph_dev/langgraph.json")
_DIFF_BLOCK = re.compile(r"^```diff\n(.*?)^```", re.DOTALL | re.MULTILINE)
# Settings of ours a developer's shell may hold: the route must find upstream's store
# untold, so none of them reaches the server.
_OURS = re.compile(r"^EVOSCIENTIST_")


def adoption_diff() -> str:
    """The document's diff of upstream's two files (its first ``diff`` block)."""
    found = _DIFF_BLOCK.search(ADOPTION_DOC.read_text())
    if found is None:
        raise AssertionError(f"{ADOPTION_DOC} has no ```diff block")
    return found.group(1)


def adopted_copy(env: UpstreamEnv, root: Path, checkpointer: str | None = None) -> Path:
    """Copies of upstream's ``http.py`` and ``langgraph.json`` under ``root`` (in the
    wheel's layout), with the adoption diff applied; returns the adopted config.
    ``checkpointer``: another ``checkpointer.path`` than upstream's."""
    for name in ADOPTED:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(env.site_packages / name, target)
    patch = root / "adoption.diff"
    patch.write_text(adoption_diff())
    # --unsafe-paths is not needed: the diff's paths are relative to ``root``.
    subprocess.run(["git", "apply", "--verbose", str(patch)], cwd=root, check=True)
    config_path = root / "EvoScientist" / "langgraph_dev" / "langgraph.json"
    config = json.loads(config_path.read_text())
    config["http"]["app"] = f"{root / 'EvoScientist' / 'langgraph_dev' / 'http.py'}:app"
    if checkpointer is not None:
        config["checkpointer"]["path"] = checkpointer
    served = root / "langgraph.json"
    served.write_text(json.dumps(config, indent=2))
    return served


def server_env(home: Path, data_dir: Path, workspace: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _OURS.match(k)}
    env.pop("PYTHONPATH", None)
    return {
        **env,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "EVOSCIENTIST_DATA_DIR": str(data_dir),
        "EVOSCIENTIST_WORKSPACE_DIR": str(workspace),
        "EVOSCIENTIST_SCRIPTED_MODEL": "1",
        "PYTHONPATH": str(SITE),
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        **extra,
    }


@contextmanager
def upstream_server(
    env: UpstreamEnv,
    root: Path,
    *,
    args: Sequence[str] = (),
    checkpointer: str | None = None,
    **extra_env: str,
) -> Iterator[DevServer]:
    """upstream's adopted server on a free port; its data, config and workspace under
    ``root``; ``args``: more ``langgraph dev`` options; ``extra_env`` for the scripted
    model's delays and the like; ``checkpointer``: see ``adopted_copy``."""
    home, data_dir, workspace = root / "home", root / "data", root / "workspace"
    for folder in (home, data_dir, workspace):
        folder.mkdir(parents=True, exist_ok=True)
    config = adopted_copy(env, root / "adopted", checkpointer)
    port = free_port()
    log_path = root / f"langgraph-dev-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                str(env.langgraph),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(config),
                *args,
            ],
            cwd=workspace,
            env=server_env(home, data_dir, workspace, **extra_env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        port = wait_until_up(port, process, log_path)
        yield DevServer(f"http://127.0.0.1:{port}", port, data_dir, workspace, log_path, process)
    finally:
        stop(process)
