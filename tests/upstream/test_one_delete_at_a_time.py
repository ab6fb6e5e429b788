"""langgraph dev, two thread deletes at once: bare, a third thread goes (the runtime's
defect the upstream test server works around); with site/one_delete_at_a_time.py, only
the two asked for."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support.servers import LANGGRAPH, free_port, stop, wait_until_up, write_config
from tests.upstream.server import SITE

TRIALS = 10


@contextmanager
def dev_server(root: Path, guarded: bool) -> Iterator[str]:
    """A ``langgraph dev`` of this repository's (our checkpointer, whose deletes await),
    started with upstream's test site on its path when ``guarded``."""
    root.mkdir()
    config = write_config(root)
    port = free_port()
    env = {"EVOSCIENTIST_DATA_DIR": str(root / "data"), "EVOSCIENTIST_MODEL": "offline"}
    if guarded:
        env |= {"PYTHONPATH": str(SITE), "EVOSCIENTIST_ONE_DELETE_AT_A_TIME": "1"}
    log_path = root / "langgraph-dev.log"
    argv = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*argv, "--port", str(port), "--config", str(config)],
            cwd=root,
            env={**_inherited(), **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        port = wait_until_up(port, process, log_path, fixed=False)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def _inherited() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("EVOSCIENTIST_")}


async def threads_lost(url: str) -> int:
    """Over ``TRIALS`` rounds: four new threads, the first two deleted at once; how many
    of the other two were gone after."""
    lost = 0
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for _ in range(TRIALS):
            ids = [(await http.post("/threads", json={})).json()["thread_id"] for _ in range(4)]
            await asyncio.gather(*(http.delete(f"/threads/{t}") for t in ids[:2]))
            for thread_id in ids[2:]:
                lost += (await http.get(f"/threads/{thread_id}")).status_code == 404
    return lost


async def test_bare_langgraph_dev_deletes_a_third_thread(tmp_path: Path) -> None:
    with dev_server(tmp_path / "bare", guarded=False) as url:
        assert await threads_lost(url) > 0, "the runtime's delete race is gone: drop the guard"


async def test_one_delete_at_a_time_deletes_only_those_asked_for(tmp_path: Path) -> None:
    with dev_server(tmp_path / "guarded", guarded=True) as url:
        assert await threads_lost(url) == 0
