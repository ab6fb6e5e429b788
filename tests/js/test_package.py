"""clients/js (@evoscientist/final-answer) as a package: its ``node --test`` unit tests,
its hand-written declarations under ``tsc --noEmit``, and what ``npm pack`` would ship."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.support import jstools

# The unit tests, in test/'s folders that mirror src/'s (one per entry point); test/live
# holds the tests that need a server (tests/js/test_live.py runs them).
UNIT_DIRS = (
    "answer",
    "core",
    "react",
    "langchain-react",
    "controller",
    "assistant-ui",
    "ag-ui",
    "route",
    "ai-sdk",
)
LIVE_DIR = jstools.PACKAGE / "test" / "live"


def _units() -> list[str]:
    return sorted(
        str(path)
        for name in UNIT_DIRS
        for path in (jstools.PACKAGE / "test" / name).glob("*.test.mjs")
    )


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=jstools.PACKAGE, capture_output=True, text=True, timeout=timeout
    )


def test_node_unit_tests_pass() -> None:
    node = jstools.node()
    units = _units()
    # A test file in a folder of its own would be run by `npm test` but not here.
    every = {str(path) for path in (jstools.PACKAGE / "test").rglob("*.test.mjs")}
    assert every - set(units) == {str(path) for path in LIVE_DIR.glob("*.test.mjs")}
    result = _run(node, "--test", *units)
    output = result.stdout + result.stderr
    print(output)
    assert result.returncode == 0, output
    assert re.search(r"^# pass [1-9]", output, re.M) and "# fail 0" in output, output


def test_declarations_typecheck() -> None:
    """tsc on test/types/usage.ts: the declarations as an app imports and calls them."""
    node = jstools.node()
    tsc = jstools.NODE_MODULES / "typescript" / "bin" / "tsc"
    result = _run(node, str(tsc), "--noEmit", "-p", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_npm_pack_ships_the_sources_and_declarations_only() -> None:
    jstools.node()
    npm = shutil.which("npm")
    if npm is None:
        jstools.missing("npm is not on PATH")
    assert npm is not None
    result = _run(npm, "pack", "--dry-run", "--json", "--ignore-scripts")
    assert result.returncode == 0, result.stderr
    (packed,) = json.loads(result.stdout)
    files = {entry["path"] for entry in packed["files"]}
    manifest = json.loads((jstools.PACKAGE / "package.json").read_text())
    assert packed["name"] == "@evoscientist/final-answer"
    assert {"package.json", "README.md", "src/core/index.js", "src/react/index.js"} <= files
    assert {"types/index.d.ts", "types/react.d.ts"} <= files
    assert not any(path.startswith(("test/", "node_modules/")) for path in files), files
    # Every export's files ship; no runtime dependency.
    for target in manifest["exports"].values():
        for path in target.values() if isinstance(target, dict) else [target]:
            assert path.removeprefix("./") in files, path
    assert not manifest.get("dependencies")


def test_the_lockfile_names_no_registry() -> None:
    lock = (jstools.PACKAGE / "package-lock.json").read_text()
    assert '"resolved"' not in lock
    # No download address (funding links to authors' pages are not one).
    assert not re.search(r"https?://[^\"/]*(registry|npm)", lock), "a registry host"
    assert "omit-lockfile-registry-resolved=true" in (jstools.PACKAGE / ".npmrc").read_text()


def test_unit_tests_and_declarations_on_the_newest_sdk(tmp_path: Path) -> None:
    """The two tests above again, importing ``jstools.NEWEST_SDK`` instead of the
    lockfile's SDK: node through test/live/sdk-dir.mjs, tsc through ``paths``."""
    node = jstools.node()
    env = jstools.sdk_env(jstools.NEWEST_SDK)
    prefix = Path(env["EVOSCI_SDK_DIR"]) / "node_modules" / "@langchain" / "langgraph-sdk"
    units = _units()
    loader = str(jstools.PACKAGE / "test" / "live" / "sdk-dir.mjs")
    version = str(jstools.PACKAGE / "test" / "live" / "sdk-version.test.mjs")
    result = subprocess.run(
        [node, "--import", loader, "--test", version, *units],
        cwd=jstools.PACKAGE,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env, "EVOSCI_SDK_VERSION": jstools.NEWEST_SDK},
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "# fail 0" in output and "# skipped 0" in output, output
    config = {
        "extends": str(jstools.PACKAGE / "tsconfig.json"),
        "compilerOptions": {
            "paths": {
                "@langchain/langgraph-sdk": [str(prefix / "dist" / "index.d.ts")],
                "@langchain/langgraph-sdk/react": [str(prefix / "dist" / "react" / "index.d.ts")],
            }
        },
        "files": [str(jstools.PACKAGE / "test" / "types" / "usage.ts")],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    tsc = jstools.NODE_MODULES / "typescript" / "bin" / "tsc"
    result = _run(node, str(tsc), "--noEmit", "--traceResolution", "-p", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"resolved to '{prefix / 'dist' / 'react' / 'index.d.ts'}'" in result.stdout


def test_unit_tests_on_the_core_floor() -> None:
    """The unit tests again, every import of @langchain/core (the package's own, in
    src/controller/messages.js, included) resolved to ``jstools.CORE_FLOOR``, the
    oldest the peer range admits, through test/live/core-dir.mjs."""
    node = jstools.node()
    env = {**os.environ, **jstools.core_env()}
    loader = str(jstools.PACKAGE / "test" / "live" / "core-dir.mjs")
    probe = subprocess.run(
        [
            node,
            "--import",
            loader,
            "--input-type=module",
            "-e",
            "console.log(import.meta.resolve('@langchain/core/messages'))",
        ],
        cwd=jstools.PACKAGE,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    floor = Path(env["EVOSCI_CORE_DIR"]) / "node_modules" / "@langchain" / "core"
    assert probe.stdout.strip().startswith(f"file://{floor}/"), probe.stdout + probe.stderr
    units = _units()
    result = subprocess.run(
        [node, "--import", loader, "--test", *units],
        cwd=jstools.PACKAGE,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "# fail 0" in output, output
