"""What the JS tests need: node ≥ 20, clients/js's npm packages, (for the browser tests)
Debian's chromium, and a fault proxy that sees every request of a client that pools its
connections. A missing tool skips the test with the reason — except under CI
(``CI=true``), where it fails: CI's .ci/run installs all of them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.proxy import FaultProxy

REPO = Path(__file__).resolve().parents[2]
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


async def run_node_test(
    test_file: Path,
    env: dict[str, str],
    timeout: float,
    node_args: tuple[str, ...] = (),
    node_path: str | None = None,
) -> tuple[int, str]:
    """``node [node_args] --test test_file`` in clients/js with ``env`` on top of this
    process's: its exit code and output. Past ``timeout`` seconds it is killed and the
    test fails with what it printed. ``node_path``: default ``node()``."""
    process = await asyncio.create_subprocess_exec(
        node_path or node(),
        *node_args,
        "--test",
        str(test_file),
        cwd=PACKAGE,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        output, _ = await process.communicate()
        pytest.fail(
            f"node --test did not finish in {timeout:g}s:\n{output.decode(errors='replace')}"
        )
    assert process.returncode is not None
    return process.returncode, output.decode(errors="replace")


def check_node_test(code: int, output: str, proxies: dict[str, FaultProxy], context: str) -> None:
    """Every test of the node run passed and none skipped (for want of its servers),
    and each proxy's fault broke a stream."""
    print(context)  # shown with -s, and by pytest on failure
    assert code == 0, f"node --test exited with {code}; {context}"
    assert "# fail 0" in output and "# skipped 0" in output, context
    for name, proxy in proxies.items():
        assert proxy.stats.fired >= 1, f"{name}: the fault never broke a stream; {context}"


def chromium() -> Path:
    if not CHROMIUM.exists():
        missing(f"{CHROMIUM} is missing: apt-get install chromium")
    return CHROMIUM


class OneRequestProxy(FaultProxy):
    """The fault proxy, with every response saying ``Connection: close``.

    The proxy picks the connections to break by their first request; a browser would
    otherwise send a run stream on a kept-alive connection opened for another request,
    out of the fault's reach. A CORS preflight (``OPTIONS``) is never the stream itself.
    """

    def _targets(self, first_line: bytes) -> bool:
        return not first_line.startswith(b"OPTIONS ") and super()._targets(first_line)

    async def _downstream(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        budget: int | None,
        slot: int,
    ) -> int:
        if budget == 0:
            return await super()._downstream(reader, writer, budget, slot)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as partial:
            head = partial.partial
        if not head.startswith(b"HTTP/1.1 101"):  # an upgrade keeps its Connection: Upgrade
            lines = [
                line
                for line in head[:-4].split(b"\r\n")
                if not line.lower().startswith(b"connection:")
            ]
            head = b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n"
        writer.write(head)
        await writer.drain()
        self.stats.downstream_bytes[slot] = len(head)
        if budget is not None and budget <= len(head):
            await self._break(writer)
            return len(head)
        rest = None if budget is None else budget - len(head)
        sent = await super()._downstream(reader, writer, rest, slot)
        self.stats.downstream_bytes[slot] = len(head) + sent
        return len(head) + sent


# ---- the SDK matrix: the JS suites run on every @langchain/langgraph-sdk they name here.
# The lockfile's SDK sits in clients/js/node_modules; the newest 1.x is installed by
# `make install` (`npm install --no-save`) into a prefix of its own under node_modules,
# so the lockfile stays on the first. Bump NEWEST_SDK when a newer 1.x is out.
NEWEST_SDK = "1.15.0"
SDK_PREFIXES = NODE_MODULES / ".sdk"
SDK_PACKAGE = Path("node_modules") / "@langchain" / "langgraph-sdk" / "package.json"


def locked_sdk() -> str:
    """The SDK version clients/js's lockfile installs (its devDependency)."""
    manifest = json.loads((PACKAGE / "package.json").read_text())
    return str(manifest["devDependencies"]["@langchain/langgraph-sdk"])


SDKS = (locked_sdk(), NEWEST_SDK)


def sdk_env(version: str) -> dict[str, str]:
    """Environment that makes the JS tests and the page's bundle (tests/js/browser/build.mjs,
    clients/js/test/live/sdk-dir.mjs) import SDK ``version``; {} for the lockfile's."""
    if version == locked_sdk():
        return {}
    return {"EVOSCI_SDK_DIR": str(installed_prefix(SDK_PREFIXES, SDK_PACKAGE, version))}


def installed_prefix(prefixes: Path, package: Path, version: str) -> Path:
    """``prefixes/version``, where ``make install`` put ``version`` of a package with
    ``npm install --no-save`` (``package``: its package.json there); skips (fails under
    CI) when it is missing."""
    prefix = prefixes / version
    manifest = prefix / package
    name = package.parent.relative_to("node_modules")
    if not manifest.exists():
        missing(f"{name} {version} is not installed in {prefix} (make install)")
    installed = json.loads(manifest.read_text())["version"]
    assert installed == version, f"{prefix} holds {name} {installed}, not {version}"
    return prefix


def sdk_params(module: str, *, split: bool = True) -> list[Any]:
    """``SDKS`` as pytest params of ``module``'s SDK fixture, with ``split`` each in its
    own xdist group: a module run on two SDKs splits over two workers instead of doubling
    one's time. (``module:version``: xdist ignores a group whose name holds a ``]``.)
    Without it the module's own group holds (a Chromium lane: tests/grouping.py)."""
    return [
        pytest.param(
            version,
            id=f"sdk-{version}",
            marks=[pytest.mark.xdist_group(f"{module}:{version}")] if split else [],
        )
        for version in SDKS
    ]


# ---- @langchain/core's floor. The package itself builds one message with it
# (src/controller/messages.js: a missing answer as an `AIMessage`), and its peer
# range is @langchain/react's own (^1.1.48): the unit tests run on that floor too,
# installed by `make install` with `npm install --no-save` into
# node_modules/.core/<version>, as NEWEST_SDK is. The browser pages use the lockfile's
# @langchain/core (the newest 1.x when this was written).
CORE_FLOOR = "1.1.48"
CORE_PREFIXES = NODE_MODULES / ".core"
CORE_PACKAGE = Path("node_modules") / "@langchain" / "core" / "package.json"


def core_env(version: str = CORE_FLOOR) -> dict[str, str]:
    """Environment that makes node (clients/js/test/live/core-dir.mjs) import @langchain/core
    ``version`` from its prefix."""
    return {"EVOSCI_CORE_DIR": str(installed_prefix(CORE_PREFIXES, CORE_PACKAGE, version))}


# ---- The AI SDK (`ai`): the transport (./ai-sdk) is read by `ai`'s own
# `readUIMessageStream` on the lockfile's `ai` (the newest major, under @ai-sdk/react 4)
# and on the major before it (what @ai-sdk/react 3 pins), installed by `make install`
# with `npm install --no-save` into node_modules/.ai/<version>, as NEWEST_SDK is.
AI_PREVIOUS = "6.0.325"
AI_PREFIXES = NODE_MODULES / ".ai"
AI_PACKAGE = Path("node_modules") / "ai" / "package.json"


def locked_ai() -> str:
    """The `ai` version clients/js's lockfile installs (its devDependency)."""
    manifest = json.loads((PACKAGE / "package.json").read_text())
    return str(manifest["devDependencies"]["ai"])


AI_VERSIONS = (locked_ai(), AI_PREVIOUS)


def ai_env(version: str) -> dict[str, str]:
    """Environment that makes clients/js/test/live/ai-sdk.test.mjs read with `ai`
    ``version``; {} for the lockfile's."""
    if version == locked_ai():
        return {}
    return {"EVOSCI_AI_DIR": str(installed_prefix(AI_PREFIXES, AI_PACKAGE, version))}
