"""The WebUI's JS recovery client (docs/examples/webui-recovery.mjs) against a real server.

Starts a real ``langgraph dev`` (and one without the final-answer route), puts one
fault-injecting proxy per fault in front of it, and runs ``node --test`` on
docs/examples/webui-recovery.test.mjs with their URLs in the environment. The proxies
live in this event loop, so node runs as an asyncio subprocess while they serve.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.proxy import Fault, FaultProxy, measure_stream_bytes
from tests.servers import DevServer, langgraph_dev, new_thread

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
NODE_TESTS = REPO / "docs" / "examples" / "webui-recovery.test.mjs"
ASSISTANT = "EvoScientist"
SERVER_ENV = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"}
STALL_TIMEOUT_MS = 2000
NODE_TIMEOUT = 150.0
# Same shape (word count, length) as the questions the JS tests ask, so fractions of
# this stream's size fall at the same places in theirs.
BASELINE_QUESTION = "WebUI fault baseline 00000000: what should the control be?"

# name → (kind, where): an int is a byte offset, a float a fraction of a healthy stream.
FAULTS: dict[str, tuple[str, float | int]] = {
    "cut-before-response": ("cut", 0),
    "cut-in-headers": ("cut", 120),
    "cut-early": ("cut", 0.2),
    "cut-mid": ("cut", 0.5),
    "cut-late": ("cut", 0.8),
    "cut-after-last-token": ("cut", 0.995),
    "reset-mid": ("reset", 0.5),
    "stall-mid": ("stall", 0.5),
}


@contextmanager
def _enter_all(managers: list[AbstractContextManager[DevServer]]) -> Iterator[list[DevServer]]:
    """Enter context managers concurrently (server start-up dominates this module)."""
    with ExitStack() as stack, ThreadPoolExecutor(len(managers)) as pool:
        futures = [pool.submit(manager.__enter__) for manager in managers]
        entered: list[DevServer] = []
        failure: BaseException | None = None
        for manager, future in zip(managers, futures, strict=True):
            try:
                entered.append(future.result())
                stack.push(manager.__exit__)
            except BaseException as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
        yield entered


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, DevServer]]:
    root = tmp_path_factory.mktemp("webui-node")
    direct = langgraph_dev(root / "direct" / "work", root / "direct" / "data", env=SERVER_ENV)
    no_route = langgraph_dev(
        root / "no-route" / "work", root / "no-route" / "data", env=SERVER_ENV, http=False
    )
    with _enter_all([direct, no_route]) as started:
        yield started[0], started[1]


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail("node (Node.js ≥ 18) is required for the WebUI client tests; none on PATH")
    return path


async def _baseline_bytes(server: DevServer) -> int:
    thread_id = await new_thread(server.url)
    return await measure_stream_bytes(server.port, thread_id, ASSISTANT, BASELINE_QUESTION)


def _position(where: float | int, total: int) -> int:
    return int(where * total) if isinstance(where, float) else where


async def _run_node(node: str, env: dict[str, str]) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        node,
        "--test",
        str(NODE_TESTS),
        cwd=REPO,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), NODE_TIMEOUT)
    except TimeoutError:
        process.kill()
        output, _ = await process.communicate()
        pytest.fail(
            f"node --test did not finish in {NODE_TIMEOUT:g}s:\n{output.decode(errors='replace')}"
        )
    assert process.returncode is not None
    return process.returncode, output.decode(errors="replace")


async def test_webui_client_recovers_through_every_fault(
    node: str, servers: tuple[DevServer, DevServer]
) -> None:
    direct, no_route = servers
    total = await _baseline_bytes(direct)
    faults = {
        name: Fault(kind=kind, after_bytes=_position(where, total))
        for name, (kind, where) in FAULTS.items()
    }
    proxies: dict[str, FaultProxy] = {}
    try:
        for name, fault in faults.items():
            proxies[name] = await FaultProxy(direct.port, fault).start()
        code, output = await _run_node(
            node,
            {
                "EVOSCI_DIRECT_URL": direct.url,
                "EVOSCI_FAULT_PROXIES": json.dumps({n: p.url for n, p in proxies.items()}),
                "EVOSCI_NO_ROUTE_URL": no_route.url,
                "EVOSCI_STALL_TIMEOUT_MS": str(STALL_TIMEOUT_MS),
            },
        )
    finally:
        for proxy in proxies.values():
            await proxy.stop()

    report: dict[str, Any] = {
        name: {"fault": faults[name].label(), "stats": vars(proxy.stats)}
        for name, proxy in proxies.items()
    }
    context = f"baseline {total} B; proxies {json.dumps(report)}\n--- node --test ---\n{output}"
    print(context)  # shown with -s, and by pytest on failure
    assert code == 0, f"node --test exited with {code}; {context}"
    # Every test ran: the integration tests were not skipped for want of the servers.
    assert "# fail 0" in output and "# skipped 0" in output, context
    for name, proxy in proxies.items():
        assert proxy.stats.faulted == 1, f"{name}: the fault never targeted a stream; {context}"
        assert proxy.stats.fired == 1, f"{name}: the fault never broke the stream; {context}"
