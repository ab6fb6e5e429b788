"""The JS package against a real server: ``streamWithRecovery`` and the JS SDK ``Client``
with ``settleFinalAnswer``, through fault-injecting proxies in front of a real
``langgraph dev`` and across a restart mid-run, on each SDK of ``jstools.SDKS``. The
proxies live in this event loop, so node runs as an asyncio subprocess.
"""

from __future__ import annotations

import asyncio
import json
import signal
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import jstools
from tests.support.proxy import (
    STREAM_FAULTS,
    Fault,
    FaultProxy,
    measure_stream_bytes,
    stream_position,
)
from tests.support.servers import DevServer, free_port, langgraph_dev, new_thread, stop

pytestmark = pytest.mark.e2e

LIVE = jstools.PACKAGE / "test" / "live"
SDK_DIR = LIVE / "sdk-dir.mjs"  # node --import: the SDK of the matrix, by EVOSCI_SDK_DIR
ASSISTANT = "EvoScientist"
SERVER_ENV = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"}
STALL_TIMEOUT_MS = 2000
NODE_TIMEOUT = 240.0
# Same shape (word count, length) as the questions the JS tests ask, so fractions of
# this stream's size fall at the same places in theirs.
BASELINE_QUESTION = "WebUI fault baseline 00000000: what should the control be?"
# The WebUI's stream modes, which the SDK test asks for.
SDK_STREAM = {
    "stream_mode": ["updates", "messages-tuple", "values", "custom"],
    "stream_subgraphs": True,
}
MID = 0.7  # of a healthy stream's bytes: inside the answer's tokens


def sdk_faults(total: int) -> dict[str, tuple[Fault, int]]:
    """The SDK test's faults (name → fault, runs asked in one thread)."""
    mid = int(MID * total)
    return {
        "cut before the response": (Fault("cut", 0), 1),
        "cut mid-answer": (Fault("cut", mid), 1),
        "reset mid-answer": (Fault("reset", mid), 1),
        "stall mid-answer": (Fault("stall", mid), 1),
        "every reconnect cut": (Fault("cut", mid, times=None, then_after_bytes=0), 1),
        "two runs in one thread, both cut": (
            Fault("cut", mid, times=2, match=("/runs/stream",)),
            2,
        ),
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


@pytest.fixture(scope="module", params=jstools.sdk_params(__name__))
def sdk(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment that makes node import SDK ``request.param``."""
    return {**jstools.sdk_env(request.param), "EVOSCI_SDK_VERSION": request.param}


@pytest.fixture(scope="module")
def node(sdk: dict[str, str]) -> str:
    return jstools.node()


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory, node: str
) -> Iterator[tuple[DevServer, DevServer]]:
    root = tmp_path_factory.mktemp("js-live")
    direct = langgraph_dev(root / "direct" / "work", root / "direct" / "data", env=SERVER_ENV)
    no_route = langgraph_dev(
        root / "no-route" / "work", root / "no-route" / "data", env=SERVER_ENV, http=False
    )
    with _enter_all([direct, no_route]) as started:
        yield started[0], started[1]


async def _sdk_stream_bytes(server: DevServer, modes: dict[str, Any] | None = None) -> int:
    """Bytes of one healthy run stream with the WebUI's stream modes (or ``modes``)."""
    thread_id = await new_thread(server.url)
    stream = {"stream_resumable": True, **(modes or SDK_STREAM)}
    return await measure_stream_bytes(server.port, thread_id, ASSISTANT, BASELINE_QUESTION, stream)


async def _run_node(
    node: str,
    test_file: Path,
    env: dict[str, str],
    sdk: dict[str, str],
) -> tuple[int, str]:
    """``test_file`` on the SDK of ``sdk`` (sdk-dir.mjs), its tests one at a time."""
    return await jstools.run_node_test(
        test_file,
        {**sdk, **env},
        NODE_TIMEOUT,
        ("--import", str(SDK_DIR), "--test-concurrency=1"),
        node,
    )


# streamWithRecovery streams with fetch and imports no SDK: the lockfile's SDK only.
@pytest.mark.parametrize("sdk", jstools.sdk_params(__name__)[:1], indirect=True)
async def test_stream_with_recovery_through_every_fault(
    node: str, sdk: dict[str, str], servers: tuple[DevServer, DevServer]
) -> None:
    direct, no_route = servers
    thread_id = await new_thread(direct.url)
    total = await measure_stream_bytes(direct.port, thread_id, ASSISTANT, BASELINE_QUESTION)
    proxies: dict[str, FaultProxy] = {}
    try:
        for name, (kind, where) in STREAM_FAULTS.items():
            at = stream_position(where, total)
            proxies[name] = await FaultProxy(direct.port, Fault(kind, at)).start()
        code, output = await _run_node(
            node,
            LIVE / "stream.test.mjs",
            {
                "EVOSCI_DIRECT_URL": direct.url,
                "EVOSCI_FAULT_PROXIES": json.dumps({n: p.url for n, p in proxies.items()}),
                "EVOSCI_NO_ROUTE_URL": no_route.url,
                "EVOSCI_STALL_TIMEOUT_MS": str(STALL_TIMEOUT_MS),
            },
            sdk,
        )
    finally:
        for proxy in proxies.values():
            await proxy.stop()
    report = {name: vars(proxy.stats) for name, proxy in proxies.items()}
    context = f"baseline {total} B; proxies {json.dumps(report)}\n--- node --test ---\n{output}"
    jstools.check_node_test(code, output, proxies, context)
    for name, proxy in proxies.items():
        assert proxy.stats.fired == 1, f"{name}: broke more than one stream; {context}"


async def test_js_sdk_client_settles_through_every_fault(
    node: str, sdk: dict[str, str], servers: tuple[DevServer, DevServer]
) -> None:
    direct, _ = servers
    total = await _sdk_stream_bytes(direct)
    faults = sdk_faults(total)
    proxies: dict[str, FaultProxy] = {}
    try:
        for name, (fault, _turns) in faults.items():
            # The SDK's fetch keeps connections alive: one request per connection, so
            # the proxy sees each run stream.
            proxies[name] = await jstools.OneRequestProxy(direct.port, fault).start()
        spec = {name: {"url": proxies[name].url, "turns": t} for name, (_, t) in faults.items()}
        code, output = await _run_node(
            node,
            LIVE / "sdk-client.test.mjs",
            {"EVOSCI_DIRECT_URL": direct.url, "EVOSCI_SDK_PROXIES": json.dumps(spec)},
            sdk,
        )
    finally:
        for proxy in proxies.values():
            await proxy.stop()
    report: dict[str, Any] = {name: vars(proxy.stats) for name, proxy in proxies.items()}
    context = f"baseline {total} B; proxies {json.dumps(report)}\n--- node --test ---\n{output}"
    # Only the restart test (below) is skipped here.
    output = output.replace("# skipped 1", "# skipped 0")
    jstools.check_node_test(code, output, proxies, context)
    two = proxies["two runs in one thread, both cut"]
    assert two.stats.fired == 2, f"both runs' streams were cut; {context}"


async def test_js_sdk_client_across_a_server_restart(
    tmp_path: Path, node: str, sdk: dict[str, str]
) -> None:
    work, data, port = tmp_path / "work", tmp_path / "data", free_port()
    slow = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.05"}
    flag = tmp_path / f"started-{uuid.uuid4().hex}"
    with langgraph_dev(work, data, port=port, env=slow) as first:
        running = asyncio.create_task(
            _run_node(
                node,
                LIVE / "sdk-client.test.mjs",
                {"EVOSCI_RESTART_URL": first.url, "EVOSCI_RESTART_SIGNAL": str(flag)},
                sdk,
            )
        )
        while not flag.exists() or not flag.read_text():  # the answer has started streaming
            assert not running.done(), running.result()
            await asyncio.sleep(0.05)
        # Killed mid-run, not after its end: else there was no restart to recover from.
        async with httpx.AsyncClient(base_url=first.url, timeout=10) as http:
            before = await http.get(f"/api/threads/{flag.read_text()}/final-answer")
        assert before.json()["complete"] is False, before.text
        await asyncio.to_thread(stop, first.process, signal.SIGKILL)
    with langgraph_dev(work, data, port=port, env=slow):
        # The client is still following the run when the server is back.
        assert not running.done()
        code, output = await running
    print(output)
    assert code == 0, output
    assert "# pass 1" in output and "# fail 0" in output, output


# Exactly-once submits: (fault, seconds until a late request reaches the server).
ONCE_WINDOW_S = 2.0  # clients/js/src/core/once.js LOOKUP_WINDOW_MS
ONCE_TIMINGS: dict[str, Fault] = {
    "never reaches the server": Fault("drop", match=("/runs/stream",)),
    "run made, response cut": Fault("cut", 0, match=("/runs/stream",)),
    "run made after the first lookup": Fault(
        "late", match=("/runs/stream",), delay=ONCE_WINDOW_S / 4
    ),
    "run made late in the window": Fault(
        "late", match=("/runs/stream",), delay=ONCE_WINDOW_S * 0.8
    ),
}


async def test_js_submits_cut_before_the_response_make_one_run(
    node: str, sdk: dict[str, str], servers: tuple[DevServer, DevServer]
) -> None:
    direct, _ = servers
    cases = [(timing, client) for timing in ONCE_TIMINGS for client in ("sdk", "stream")]
    cases.append(("run made, response cut", "bare-sdk"))  # the defect, as a control
    proxies: dict[str, FaultProxy] = {}
    try:
        for timing, client in cases:
            fault = ONCE_TIMINGS[timing]
            proxies[f"{timing} / {client}"] = await jstools.OneRequestProxy(
                direct.port, fault
            ).start()
        spec = {
            name: {"url": proxy.url, "delayMs": int(proxy.fault.delay * 1000)}
            for name, proxy in proxies.items()
        }
        code, output = await _run_node(
            node,
            LIVE / "once.test.mjs",
            {"EVOSCI_DIRECT_URL": direct.url, "EVOSCI_ONCE_PROXIES": json.dumps(spec)},
            sdk,
        )
    finally:
        for proxy in proxies.values():
            await proxy.stop()
    report = {name: vars(proxy.stats) for name, proxy in proxies.items()}
    jstools.check_node_test(
        code, output, proxies, f"proxies {json.dumps(report)}\n--- node --test ---\n{output}"
    )


async def test_the_live_tests_import_the_sdk_under_test(node: str, sdk: dict[str, str]) -> None:
    code, output = await _run_node(node, LIVE / "sdk-version.test.mjs", {}, sdk)
    assert code == 0 and "# pass 1" in output, output


# assistant-ui's default stream modes (unstable_createLangGraphStream).
AUI_STREAM = {"stream_mode": ["messages", "updates", "custom"]}


async def test_assistant_ui_stream_ends_on_the_route_answer_through_cuts(
    node: str, sdk: dict[str, str], servers: tuple[DevServer, DevServer]
) -> None:
    """clients/js/test/live/assistant-ui.test.mjs: the `./assistant-ui` stream callback
    through a cut mid-answer on every run stream, and a POST cut before its response."""
    direct, _ = servers
    total = await _sdk_stream_bytes(direct, AUI_STREAM)
    faults = {
        "every stream cut mid-answer": Fault("cut", int(MID * total), times=None),
        "cut before the response": Fault("cut", 0, match=("/runs/stream",)),
    }
    proxies: dict[str, FaultProxy] = {}
    try:
        for name, fault in faults.items():
            proxies[name] = await jstools.OneRequestProxy(direct.port, fault).start()
        code, output = await _run_node(
            node,
            LIVE / "assistant-ui.test.mjs",
            {
                "EVOSCI_DIRECT_URL": direct.url,
                "EVOSCI_AUI_PROXIES": json.dumps({n: p.url for n, p in proxies.items()}),
            },
            sdk,
        )
    finally:
        for proxy in proxies.values():
            await proxy.stop()
    report = {name: vars(proxy.stats) for name, proxy in proxies.items()}
    jstools.check_node_test(
        code, output, proxies, f"baseline {total} B; proxies {json.dumps(report)}\n{output}"
    )
