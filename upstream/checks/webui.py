"""Upstream EvoScientist-WebUI's own CI on the kit's WebUI patch: the tree at 9c90a77
(v0.2.4) unchanged (the control) and with ``upstream/webui.patch`` applied and this
repository's JS package installed into it (the patched tree), side by side.

Each tree is laid anew from the WebUI's git history and gets the steps of upstream's
``.github/workflows/ci.yml``: ``npm ci``, ``npm run format:check`` (prettier), ``npm run
lint`` (eslint; its errors counted), ``npm run typecheck`` (tsc), ``npm test`` (vitest;
passed and failed counted) and ``npm run build`` (next build). The patched tree is the
control plus ``git apply upstream/webui.patch`` plus ``npm install <tarball>`` (the
tarball ``npm pack`` makes of ``clients/js``), which writes the dependency into its
``package.json`` and lockfile as ``npm install @evoscientist/final-answer`` would, before
its ``npm ci``.

``next build`` fetches the app's Google font (``next/font/google``), which this machine
cannot reach: the font's stylesheet is served from a file that Next reads instead of the
network (``NEXT_FONT_GOOGLE_MOCKED_RESPONSES``, keyed by the stylesheet URLs Next's own
font loader computes for the font calls in the tree), and the font file it names from a
server on 127.0.0.1 for the build's length (Turbopack fetches font files even then). The
WebUI's files are not changed for it; the font's bytes are a stand-in.

Kept under ``--work`` between runs: each tree's ``node_modules`` (``npm ci`` runs again
only when the tree's ``package-lock.json``, the tarball, node or npm changed) and npm's
cache. Prints a markdown table; exits 1 when the patched tree fails a check, or passes
fewer tests than the control.

    .venv/bin/python upstream/checks/webui.py [--work .upstream-checks]
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PATCH = REPO / "upstream" / "webui.patch"
PACKAGE = REPO / "clients" / "js"
COMMIT = "9c90a77"
# Where the WebUI is fetched from when no local git directory of it is given.
WEBUI_REPOSITORY = "https://github.com/EvoScientist/EvoScientist-WebUI.git"
STEP_TIMEOUT = 30 * 60
KEPT = {"node_modules"}  # what a tree keeps when it is laid anew
# What the steps leave in a kept node_modules (vitest's and tools' caches): removed.
STEP_CACHES = (".vite", ".vite-temp", ".cache")

# Run in a tree: the stylesheet URL Next's font loader asks for each `next/font/google`
# call in the tree's sources, computed by that loader's own helpers.
FONT_URLS = r"""
const fs = require("node:fs");
const path = require("node:path");
const next = path.dirname(require.resolve("next/package.json", { paths: [process.cwd()] }));
const google = path.join(next, "dist/compiled/@next/font/dist/google");
const helper = (name) => require(path.join(google, name + ".js"));
const { validateGoogleFontFunctionCall } = helper("validate-google-font-function-call");
const { getFontAxes } = helper("get-font-axes");
const { getGoogleFontsUrl } = helper("get-google-fonts-url");
const SKIP = new Set(["node_modules", "dist", "public", "out", "build", "coverage"]);
function* sources(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || SKIP.has(entry.name)) continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(file);
    else if (/\.[cm]?[jt]sx?$/.test(entry.name)) yield file;
  }
}
// The text between the parentheses opened at `at`.
function argument(text, at) {
  let depth = 0;
  for (let i = at; i < text.length; i += 1) {
    if (text[i] === "(") depth += 1;
    else if (text[i] === ")" && --depth === 0) return text.slice(at + 1, i);
  }
  throw new Error("unbalanced call at " + at);
}
const fonts = [];
for (const file of sources(".")) {
  const text = fs.readFileSync(file, "utf8");
  const imports = /import\s*\{([^}]*)\}\s*from\s*["']next\/font\/google["']/g;
  for (const [, names] of text.matchAll(imports)) {
    for (const spec of names.split(",").map((s) => s.trim()).filter(Boolean)) {
      const [name, local = name] = spec.split(/\s+as\s+/);
      for (const call of text.matchAll(new RegExp("\\b" + local + "\\s*\\(", "g"))) {
        const inner = argument(text, call.index + call[0].length - 1).trim();
        const options = inner ? Function("return (" + inner + ")")() : {};
        const font = validateGoogleFontFunctionCall(name, options);
        const { fontFamily, weights, styles, selectedVariableAxes } = font;
        const axes = getFontAxes(fontFamily, weights, styles, selectedVariableAxes);
        fonts.push({
          url: getGoogleFontsUrl(font.fontFamily, axes, font.display),
          family: font.fontFamily,
          subsets: font.subsets && font.subsets.length ? font.subsets : ["latin"],
        });
      }
    }
  }
}
console.log(JSON.stringify(fonts));
"""
STAND_IN_FONT = b"wOF2 stand-in: the build copies these bytes, no browser reads them\n"


def run(
    *argv: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
    timeout: float | None = STEP_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        check=check,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def npm_env(work: Path) -> dict[str, str]:
    """npm as upstream's CI runs it (CI=true), its cache under ``work``, and a lockfile
    that names no registry address for what it installs."""
    env = {
        **os.environ,
        "CI": "true",
        "npm_config_cache": str(work / "webui-npm-cache"),
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_update_notifier": "false",
        "npm_config_omit_lockfile_registry_resolved": "true",
        "NEXT_TELEMETRY_DISABLED": "1",
    }
    return env


def fetched_webui(work: Path) -> Path:
    """A bare clone of the WebUI's repository under ``work``, made once."""
    clone = work / "webui-repository.git"
    if not clone.is_dir():
        say(f"cloning {WEBUI_REPOSITORY}")
        subprocess.run(
            ["git", "clone", "--quiet", "--bare", WEBUI_REPOSITORY, str(clone)], check=True
        )
    return clone


def lay_tree(mirror: str, commit: str, tree: Path) -> None:
    """The WebUI at ``commit``, laid anew at ``tree`` (its ``node_modules`` kept aside)."""
    tree.mkdir(parents=True, exist_ok=True)
    for cache in STEP_CACHES:
        shutil.rmtree(tree / "node_modules" / cache, ignore_errors=True)
    for entry in tree.iterdir():
        if entry.name in KEPT:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    archive = subprocess.Popen(
        ["git", "--git-dir", mirror, "archive", "--format=tar", commit], stdout=subprocess.PIPE
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], stdin=archive.stdout, check=True)
    assert archive.stdout is not None
    archive.stdout.close()
    if archive.wait() != 0:
        raise SystemExit(f"git archive {commit} failed in {mirror}")


def pack(work: Path, env: dict[str, str]) -> Path:
    """The JS package's tarball, as ``npm pack`` makes it of ``clients/js``."""
    out = work / "webui-pack"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    made = run("npm", "pack", "--pack-destination", out, cwd=PACKAGE, env=env)
    return out / made.stdout.strip().splitlines()[-1]


def digest(*paths: Path) -> str:
    sha = hashlib.sha256()
    for path in paths:
        sha.update(path.read_bytes())
    return sha.hexdigest()


@dataclass
class Column:
    name: str
    rows: dict[str, str] = field(default_factory=dict)
    ok: dict[str, bool] = field(default_factory=dict)
    passed: int = 0


class Steps:
    """The CI steps of one tree, each logged to ``work/webui-logs/<tree>-<step>.log``."""

    def __init__(self, tree: Path, work: Path, env: dict[str, str], column: Column) -> None:
        self.tree, self.env, self.column = tree, env, column
        self.logs = work / "webui-logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    def step(
        self, row: str, *argv: str | Path, env: dict[str, str] | None = None
    ) -> tuple[bool, str]:
        started = time.monotonic()
        try:
            done = run(*argv, cwd=self.tree, env=env or self.env, check=False)
            output, code = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as expired:
            output, code = f"{expired}\n", -1
        log = self.logs / f"{self.tree.name}-{re.sub(r'[^a-z]+', '-', row.lower())}.log"
        log.write_text(output)
        say(f"  {self.column.name}: {row}: exit {code} ({time.monotonic() - started:.0f} s)")
        return code == 0, output

    def record(self, row: str, ok: bool, cell: str) -> None:
        self.column.ok[row] = ok
        self.column.rows[row] = cell


def install(steps: Steps, extra: Path | None) -> None:
    """``npm ci``, skipped when the tree's ``node_modules`` came from the same lockfile."""
    tree = steps.tree
    stamp_file = tree / "node_modules" / ".upstream-checks-stamp"
    versions = run("node", "--version").stdout + run("npm", "--version").stdout
    stamp = digest(tree / "package-lock.json", *([extra] if extra else [])) + versions
    if stamp_file.exists() and stamp_file.read_text() == stamp:
        say(f"  {steps.column.name}: npm ci: node_modules kept from the last run (same lockfile)")
        steps.record("npm ci", True, "pass")
        return
    ok, output = steps.step("npm ci", "npm", "ci")
    if ok:
        stamp_file.write_text(stamp)
    steps.record("npm ci", ok, "pass" if ok else f"fail: {_last(output)}")


def lint(steps: Steps) -> None:
    ok, output = steps.step("lint", "npm", "run", "lint")
    counted = re.search(r"(\d+) errors?, (\d+) warnings?", output)
    if counted:
        errors, warnings = int(counted[1]), int(counted[2])
        cell = f"{'pass' if ok else 'fail'}, {errors} errors ({warnings} warnings)"
    elif ok:
        errors, cell = 0, "pass, 0 errors"
    else:
        errors, cell = -1, f"fail: {_last(output)}"
    steps.record("lint (eslint)", ok and errors == 0, cell)


def vitest(steps: Steps, work: Path) -> None:
    report = work / "webui-logs" / f"{steps.tree.name}-vitest.json"
    report.unlink(missing_ok=True)
    ok, output = steps.step(
        "vitest",
        "npm",
        "test",
        "--",
        "--reporter=default",
        "--reporter=json",
        f"--outputFile.json={report}",
    )
    if report.exists():
        counts = json.loads(report.read_text())
        passed, failed = counts["numPassedTests"], counts["numFailedTests"]
        files = sorted(
            Path(result["name"]).name
            for result in counts["testResults"]
            if result["status"] != "passed"
        )
        steps.column.passed = passed
        cell = f"{passed} passed, {failed} failed"
        if files:
            cell += f" (in {plural(len(files), 'file')}: {', '.join(files)})"
        steps.record("vitest", ok and failed == 0, cell)
    else:
        steps.record("vitest", False, f"fail: {_last(output)}")


class FontFiles(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "font/woff2")
        self.send_header("Content-Length", str(len(STAND_IN_FONT)))
        self.end_headers()
        self.wfile.write(STAND_IN_FONT)

    def log_message(self, *args: object) -> None:
        pass


def font_responses(steps: Steps, work: Path, port: int) -> Path:
    """The file ``NEXT_FONT_GOOGLE_MOCKED_RESPONSES`` names: each stylesheet URL of the
    tree's Google fonts → a stylesheet whose font files are served on 127.0.0.1:``port``."""
    found = run("node", "-e", FONT_URLS, cwd=steps.tree, env=steps.env)
    responses: dict[str, str] = {}
    for font in json.loads(found.stdout):
        slug = re.sub(r"[^a-z0-9]+", "-", font["family"].lower())
        faces = [
            f"/* {subset} */\n@font-face {{\n  font-family: '{font['family']}';\n"
            f"  font-style: normal;\n  font-display: swap;\n"
            f"  src: url(http://127.0.0.1:{port}/{slug}-{subset}.woff2) format('woff2');\n}}\n"
            for subset in font["subsets"]
        ]
        responses[font["url"]] = "".join(faces)
    path = work / "webui-fonts" / f"{steps.tree.name}.cjs"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"module.exports = {json.dumps(responses, indent=2)};\n")
    return path


def build(steps: Steps, work: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FontFiles)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        responses = font_responses(steps, work, server.server_address[1])
        env = {**steps.env, "NEXT_FONT_GOOGLE_MOCKED_RESPONSES": str(responses)}
        ok, output = steps.step("next build", "npm", "run", "build", env=env)
    finally:
        server.shutdown()
        server.server_close()
    steps.record("next build", ok, "pass" if ok else f"fail: {_last(output)}")


def column(name: str, tree: Path, work: Path, env: dict[str, str], extra: Path | None) -> Column:
    result = Column(name)
    steps = Steps(tree, work, env, result)
    install(steps, extra)
    if not result.ok["npm ci"]:
        return result
    ok, output = steps.step("format:check", "npm", "run", "format:check")
    steps.record("format:check (prettier)", ok, "pass" if ok else f"fail: {_last(output)}")
    lint(steps)
    ok, output = steps.step("typecheck", "npm", "run", "typecheck")
    steps.record("typecheck (tsc)", ok, "pass" if ok else f"fail: {_last(output)}")
    vitest(steps, work)
    build(steps, work)
    return result


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def _last(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return (lines[-1] if lines else "no output")[:160].replace("|", "\\|")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=REPO / ".upstream-checks")
    parser.add_argument(
        "--mirror",
        help="a git directory of the WebUI holding the commit (default: a bare clone of "
        "its repository, made once under --work)",
    )
    parser.add_argument("--commit", default=COMMIT)
    parser.add_argument("--patch", type=Path, default=PATCH, help="the patch to apply")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    if args.mirror is None:
        args.mirror = str(fetched_webui(work))
    elif not Path(args.mirror).is_dir():
        raise SystemExit(f"no git directory of the WebUI at {args.mirror}")
    env = npm_env(work)
    git_env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(work)}

    control_tree, patched_tree = work / "webui-control", work / "webui-patched"
    say(f"laying the WebUI at {args.commit} twice under {work}")
    lay_tree(args.mirror, args.commit, control_tree)
    lay_tree(args.mirror, args.commit, patched_tree)
    patch = args.patch.resolve()
    applied = run("git", "apply", "--verbose", patch, cwd=patched_tree, env=git_env)
    touched = re.findall(r"^Applied patch (\S+) cleanly", applied.stderr, re.MULTILINE)
    tarball = pack(work, env)
    say(f"patched: {len(touched)} files; npm install {tarball.name}")
    run("npm", "install", "--package-lock-only", tarball, cwd=patched_tree, env=env)

    control = column("control", control_tree, work, env, None)
    patched = column("patched", patched_tree, work, env, tarball)

    rows = [
        (f"`git apply {shown(patch)}`", "-", f"applies ({plural(len(touched), 'file')})"),
        (f"`npm install {tarball.name}`", "-", "pass"),
        *((row, control.rows.get(row, "-"), cell) for row, cell in patched.rows.items()),
    ]
    table = [
        f"EvoScientist-WebUI {args.commit}: upstream's CI steps, unchanged and with the kit's"
        " patch\n",
        f"| step | control ({args.commit}) | patched |",
        "|---|---|---|",
        *(f"| {row} | {before} | {after} |" for row, before, after in rows),
    ]
    print("\n".join(table))
    (work / "webui-table.md").write_text("\n".join(table) + "\n")
    failed = not all(patched.ok.values()) or patched.passed < control.passed
    if patched.passed < control.passed:
        print(f"\npatched passes {patched.passed} tests, the control {control.passed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
