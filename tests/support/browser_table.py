"""The measured browser table (docs/webui-browser-table.md), written in column groups.

Each group is measured by its own test and says what it was measured on: the
``useStream`` columns once per SDK of ``jstools.SDKS`` (tests/js/test_browser_recovery.py),
@langchain/react's columns once, on the SDK that binding pins
(tests/js/test_browser_langchain_react.py). A test re-measures its group and merges it
into the file, keeping the other groups as they were measured, so one SDK can be
re-measured alone (``make webui-browser-table TABLE_K=sdk-1.15.0``).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from playwright.async_api import Browser

from tests.support import jstools
from tests.support.browser_page import Shown

NOT_APPLICABLE = "—"
NOT_MEASURED = "not measured"
# Every row of the table, in its order: the faults, then what a user does mid-run.
ROWS = (
    "no fault",
    "cut before the response",
    "cut before the request reaches the server; it arrives 0.5 s later",
    "cut mid-answer",
    "reset (RST) mid-answer",
    "stall mid-answer",
    "cut mid-answer, every reconnect cut",
    "two runs in one page, both cut",
    "cut, then reload: the rejoin cut too",
    "server restarted mid-run",
    "Stop mid-answer",
    "Stop 1 s after a cut, while recovering",
    "Stop 6 s after a cut, while recovering",
    "switch to another thread mid-run, come back after its end",
)
# Why a cell cannot apply: a cell says `— [^key]`, the table ends with the reason.
NOTES = {
    "websocket-commands": (
        "Over WebSocket the commands travel on the socket itself: there is no request of its"
        " own to cut before it reaches the server and deliver late."
    ),
    "threadless": (
        "@ai-sdk/langchain's `LangSmithDeploymentTransport` starts threadless runs (`POST"
        " /runs/stream`), whose temporary thread the server deletes at the run's end: there"
        " is no thread to follow across a restart, nor one to show again."
    ),
}


def not_applicable(key: str) -> str:
    """A cell that cannot apply, pointing at ``NOTES[key]``."""
    assert key in NOTES, key
    return f"{NOT_APPLICABLE} [^{key}]"


LANGCHAIN_REACT = "@langchain/react"
ASSISTANT_UI = "assistant-ui"
SVELTE = "@langchain/svelte"
COPILOTKIT = "CopilotKit"
AI_SDK = "AI SDK"
# A column's title: the setup, then its group.
SEPARATOR = " · "
INTRO = (
    "What a browser shows 1 s after each run's end, per fault (rows) and setup (columns),"
    " measured by `make webui-browser-table` (docs/webui-integration.md). Each group of"
    " columns was measured on its own, on:"
)


def sdk_group(sdk: str) -> str:
    return f"SDK {sdk}"


def group_order() -> list[str]:
    return [
        *(sdk_group(sdk) for sdk in jstools.SDKS),
        LANGCHAIN_REACT,
        ASSISTANT_UI,
        SVELTE,
        COPILOTKIT,
        AI_SDK,
    ]


def _verdict(run: Shown) -> str:
    verdict = run.verdict()
    if not verdict.startswith("exact") and run.delay is not None:
        verdict += f" (exact {run.delay:.1f} s after the run's end)"
    return verdict


def cell(shown: list[Shown]) -> str:
    """One cell: each run's verdict, the late ones with when they caught up."""
    verdicts = [_verdict(run) for run in shown]
    if len(verdicts) == 1:
        return verdicts[0]
    return "; ".join(f"run {i}: {v}" for i, v in enumerate(verdicts, start=1))


def package_version(*names: str) -> str:
    path = jstools.NODE_MODULES.joinpath(*names, "package.json")
    return str(json.loads(path.read_text())["version"])


def environment(browser: Browser) -> str:
    """What every group also ran on, and when."""
    return (
        f"react {package_version('react')}, langgraph-api {version('langgraph-api')},"
        f" chromium {browser.version}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )


@dataclass
class Table:
    groups: dict[str, str] = field(default_factory=dict)  # group → what it ran on
    columns: list[tuple[str, str]] = field(default_factory=list)  # (group, setup)
    rows: dict[str, dict[tuple[str, str], str]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> Table:
        table = cls()
        if not path.exists():
            return table
        header: list[tuple[str, str]] | None = None
        for line in path.read_text().splitlines():
            if group := re.match(r"^- \*\*(.+?)\*\*: (.*)$", line):
                table.groups[group[1]] = group[2]
            elif line.startswith("| fault |"):
                header = [_split_title(title) for title in _cells(line)[1:]]
                table.columns = [column for column in header if column[0]]
            elif line.startswith("[^"):
                continue  # footnotes are written anew from NOTES
            elif header is not None and line.startswith("| ") and not line.startswith("|---"):
                name, *cells = _cells(line)
                table.rows[name] = dict(zip(header, cells, strict=False))
        return table

    def merge(self, group: str, measured_on: str, rows: dict[str, dict[str, str]]) -> None:
        """Replace ``group``'s columns by ``rows`` (fault → setup → cell)."""
        setups = list(dict.fromkeys(setup for cells in rows.values() for setup in cells))
        self.groups[group] = measured_on
        self.columns = [column for column in self.columns if column[0] != group]
        self.columns += [(group, setup) for setup in setups]
        for cells in self.rows.values():
            for column in [column for column in cells if column[0] == group]:
                del cells[column]
        for name, cells in rows.items():
            row = self.rows.setdefault(name, {})
            for setup, value in cells.items():
                row[(group, setup)] = value

    def write(self, path: Path) -> str:
        order = group_order()
        rank = {group: i for i, group in enumerate(order)}
        groups = sorted(self.groups, key=lambda group: rank.get(group, len(order)))
        columns = sorted(self.columns, key=lambda column: rank.get(column[0], len(order)))
        lines = [INTRO, ""]
        lines += [f"- **{group}**: {self.groups[group]}" for group in groups]
        lines += [
            "",
            "| fault | " + " | ".join(f"{setup}{SEPARATOR}{g}" for g, setup in columns) + " |",
            "|---" * (len(columns) + 1) + "|",
        ]
        rank_of_row = {name: i for i, name in enumerate(ROWS)}
        names = sorted(self.rows, key=lambda name: rank_of_row.get(name, len(ROWS)))
        notes: list[str] = []
        for name in names:
            values = [self.rows[name].get(column, NOT_MEASURED) for column in columns]
            lines.append(f"| {name} | " + " | ".join(values) + " |")
            for value in values:
                notes += [key for key in re.findall(r"\[\^([\w-]+)\]", value) if key not in notes]
        if notes:
            lines += ["", *(f"[^{key}]: {NOTES[key]}" for key in notes)]
        text = "\n".join(lines) + "\n"
        path.write_text(text)
        return text


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split(" | ")]


def _split_title(title: str) -> tuple[str, str]:
    setup, _, group = title.rpartition(SEPARATOR)
    return (group, setup) if setup else ("", title)


def record(path: str, group: str, measured_on: str, rows: dict[str, dict[str, str]]) -> str:
    """Merge one group's measurement into the table at ``path``; the table's text."""
    table = Table.read(Path(path))
    table.merge(group, measured_on, rows)
    return table.write(Path(path))


# What an adopted cell may say: the route's answer within the second, once per submit
# (not "exact (late)", nor "exact 1.2 s after the run's end", nor "(2 runs …)"); a Stop
# that kept every character shown and cancelled the run; or a cell that cannot apply.
RECOVERED = re.compile(
    rf"exact|stopped: (\d+)/\1 chars kept, run cancelled|{NOT_APPLICABLE}( \[\^[\w-]+\])?"
)


def assert_recovery_exact(rows: dict[str, dict[str, str]], setups: list[str]) -> None:
    """Every run in a recovery column showed the route's answer within the second, one
    run per submit; every Stop kept what was shown and cancelled its run."""
    wrong = {
        (name, setup): cells.get(setup, NOT_MEASURED)
        for name, cells in rows.items()
        for setup in setups
        if not all(
            RECOVERED.fullmatch(re.sub(r"^run \d+: ", "", verdict))
            for verdict in cells.get(setup, NOT_MEASURED).split("; ")
        )
    }
    assert not wrong, wrong
