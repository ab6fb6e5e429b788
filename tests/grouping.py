"""How ``make test`` spreads the suite over pytest-xdist's workers: which tests share a
worker, and which groups start first.

Apart from the conftest so that a pytest run of its own (tests/test_groups.py) can load
the hook without the suite's fixtures, whose imports (langgraph, the stores) cost seconds
of CPU in every process.
"""

from __future__ import annotations

import pytest


# First: xdist's own hook reads the groups into each test's id, and a group added after
# it is never seen (tests/test_groups.py). Until 2026-12-03 no module here stayed on one
# worker: each of the three could start its own server for it.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``pytest -n N --dist loadgroup`` (``make test``), a module whose tests share
    a module-scoped fixture (a ``langgraph dev`` server, mostly) runs on one worker, so
    the fixture is set up once; every other test goes to whichever worker is free. No
    effect without xdist, and nothing for a new module to declare. A test that names
    its own ``xdist_group`` keeps it (xdist would join the two names)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            _check_group_names(item)
            continue
        shared = ONE_AT_A_TIME.get(item.nodeid.split("::")[0])
        if shared is not None:
            item.add_marker(pytest.mark.xdist_group(shared))
        elif _uses_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    # xdist hands out groups in collection order: the longest go first, so that none of
    # them starts last and holds the run up alone (each takes minutes on one worker).
    items.sort(key=lambda item: not item.nodeid.startswith(LONGEST_GROUPS_FIRST))


def _check_group_names(item: pytest.Item) -> None:
    """xdist appends ``@name`` to the test's id and reads the group back only when that
    ``@`` comes after the id's last ``]``: a name holding a ``]`` (or an ``@``) is no
    group at all, silently, and its tests go to every worker, each starting its own
    servers (the SDK and transport groups did, until 2026-12-03)."""
    for marker in item.iter_markers("xdist_group"):
        name = str(marker.args[0] if marker.args else marker.kwargs.get("name", "default"))
        if "]" in name or "@" in name:
            raise pytest.UsageError(
                f"{item.nodeid}: xdist_group {name!r} is not a group xdist can read "
                "(name it without ']' or '@')"
            )


# The Chromium modules, in two lanes: each lane's modules share one worker, one after the
# other, so at most two pages load at once. Each must show the route's answer within a
# second of its run's end. With each module split per SDK or transport, four ran at once
# in the suite's first minutes, and three fresh-clone runs of three (2026-12-03) each
# had one page miss the second there (1.06, 2.9 and 1.4 s; the first two partly the
# client's 1 s settle gap and the test's own lateness, both since mended). The lanes take
# about 6 min each, inside the suite's 9.
ONE_AT_A_TIME = {
    "tests/js/test_browser_langchain_react.py": "chromium:a",
    # LangGraph's JS server: its two pages after @langchain/react's, on their worker.
    "tests/js/test_js_server.py": "chromium:a",
    # The AI SDK's useChat page: its three tests after those, on the same worker.
    "tests/js/test_browser_ai_sdk.py": "chromium:a",
    "tests/js/test_browser_recovery.py": "chromium:b",
    "tests/js/test_browser_assistant_ui.py": "chromium:b",
    "tests/js/test_browser_svelte.py": "chromium:b",
    # CopilotKit's page, after Svelte's: in a group of its own it made a third page at
    # once, and a thread shown again missed its second twice in fresh-clone CIs (1.07
    # and 1.5 s, 2026-12-05/06), its runtime starved of CPU while three pages loaded.
    "tests/js/test_copilotkit.py": "chromium:b",
}

# The modules whose groups take longest (``--durations``): browsers and node suites on
# a real server, and upstream's own server.
LONGEST_GROUPS_FIRST = (
    "tests/js/test_browser_langchain_react.py",
    "tests/js/test_browser_recovery.py",
    "tests/js/test_live.py",
    "tests/upstream/",
    "tests/recovery/test_once.py",
)


def _uses_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        definition.scope in ("module", "package")
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
    )
