"""Module heads say what a module is and why, in a few lines: the median head of the
package (Python docstrings and JS leading comments) is at most five lines, and no head
tells history (dates, issue numbers, former behaviour)."""

from __future__ import annotations

import ast
import re
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = (ROOT / "evoscientist_final_answer", ROOT / "clients" / "js" / "src")
ALSO_CHECKED = (ROOT / "tests", ROOT / "bench")
JS_SUFFIXES = {".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"}
DIRECTIVE = re.compile(r"""\s*["']use (client|strict)["'];?\s*""")
HISTORY = re.compile(
    r"\b20\d\d-\d\d|\bissue \d+|\bissue #?\d+|\bearlier,|\bEarlier\b|\bused to\b|\bno longer\b"
)
MEDIAN_LINES = 5


def python_head(path: Path) -> list[str]:
    """The module docstring's lines, from its opening quotes to its closing ones."""
    source = path.read_text()
    body = ast.parse(source).body
    if not body or not isinstance(body[0], ast.Expr):
        return []
    node = body[0]
    if not isinstance(node.value, ast.Constant) or not isinstance(node.value.value, str):
        return []
    return source.splitlines()[node.lineno - 1 : node.end_lineno]


def js_head(path: Path) -> list[str]:
    """The comment lines the file opens with (after a shebang or a directive)."""
    lines = path.read_text().splitlines()
    start = 0
    while start < len(lines) and (
        lines[start].startswith("#!")
        or not lines[start].strip()
        or DIRECTIVE.fullmatch(lines[start])
    ):
        start += 1
    head: list[str] = []
    in_block = False
    for line in lines[start:]:
        text = line.strip()
        if in_block:
            head.append(line)
            in_block = "*/" not in text
        elif text.startswith("//"):
            head.append(line)
        elif text.startswith("/*"):
            head.append(line)
            in_block = "*/" not in text[2:]
        else:
            break
    return head


def heads(roots: tuple[Path, ...]) -> dict[Path, list[str]]:
    found: dict[Path, list[str]] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if "node_modules" in path.parts or not path.is_file():
                continue
            if path.suffix == ".py":
                found[path] = python_head(path)
            elif path.suffix in JS_SUFFIXES:
                found[path] = js_head(path)
    return found


def test_the_package_heads_are_a_few_lines() -> None:
    found = heads(PACKAGE)
    median = statistics.median(len(head) for head in found.values())
    longest = sorted(found, key=lambda p: -len(found[p]))[:5]
    assert median <= MEDIAN_LINES, [
        f"{p.relative_to(ROOT)}: {len(found[p])} lines" for p in longest
    ]


def test_no_head_tells_history() -> None:
    told = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path, head in heads(PACKAGE + ALSO_CHECKED).items()
        for line in head
        if HISTORY.search(line)
    ]
    assert not told, told
