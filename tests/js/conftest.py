"""What the Chromium modules share on one worker (tests/grouping.py): one Chromium, one
built site per SDK (built once per run, even across workers), one ``langgraph dev``.
Their tests run in the session's event loop: the browser is bound to the loop it was
started in.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.support import jstools
from tests.support.browser_langchain import server
from tests.support.browser_page import build_page, headless_chromium, static_site
from tests.support.servers import DevServer


@pytest.fixture(scope="session")
def node() -> str:
    return jstools.node()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser(node: str) -> AsyncIterator[Browser]:
    jstools.chromium()
    async with headless_chromium() as browser:
        yield browser


@pytest.fixture(scope="session")
def api(tmp_path_factory: pytest.TempPathFactory, node: str) -> Iterator[DevServer]:
    """The browser modules' ``langgraph dev``: the repository's langgraph.json (its CORS
    included), runs of a few seconds, and the paced agent beside the project's
    (tests/support/slow_agent_graph.py), for Stops and thread switches mid-run."""
    jstools.chromium()
    with server(tmp_path_factory.mktemp("browser-api")) as dev:
        yield dev


def _run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory every worker of this run sees (this process's own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory, node: str) -> Callable[[str | None], Path]:
    """``pages(sdk)``: the directory of the test pages bundled with SDK ``sdk`` (None:
    the lockfile's), built once for the run."""
    root = _run_root(tmp_path_factory)

    def built(sdk: str | None) -> Path:
        version = sdk or jstools.locked_sdk()
        out = root / f"pages-sdk-{version}"
        with (root / f"pages-sdk-{version}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (out / "sdk.json").exists():
                build_page(node, out, jstools.sdk_env(version))
        return out

    return built


@pytest.fixture(scope="session")
def site(pages: Callable[[str | None], Path]) -> Iterator[str]:
    """The lockfile's SDK's pages, served on their own origin (not the API's)."""
    with static_site(pages(None)) as url:
        yield url
