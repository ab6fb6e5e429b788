"""Shared fixtures: a checkpoint store seeded by real graphs, and an in-process client
for the Starlette app reading it.

The store is a ``sessions.db`` file by default. A module or test marked
``@pytest.mark.backends("sqlite", "postgres")`` runs once per backend through the
``backend`` parameter, with the same expectations: ``store``, ``seeder`` and ``client``
then write and read a throwaway PostgreSQL database too (see ``tests/support/postgres.py``).
Tests that inspect the SQLite file itself use ``db_path`` and stay SQLite-only.

The writer (``seeder``) stays open for the whole test so ``thread.state()``
(``graph.aget_state``) can be compared with what the route answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.postgres import session_database, temporary_schema
from tests.support.seeds import BACKENDS, SeededThread, Seeder, Store, answer_client, open_seeder


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "backends(*names): run the test once per checkpoint store named "
        f"({', '.join(BACKENDS)}); unmarked tests use sqlite",
    )


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
    "tests/js/test_browser_recovery.py": "chromium:b",
    "tests/js/test_browser_assistant_ui.py": "chromium:b",
    "tests/js/test_browser_svelte.py": "chromium:b",
}

# The modules whose groups take longest (``--durations``): browsers and node suites on
# a real server, and upstream's own server.
LONGEST_GROUPS_FIRST = (
    "tests/js/test_browser_langchain_react.py",
    "tests/js/test_browser_recovery.py",
    "tests/js/test_live.py",
    "tests/js/test_copilotkit.py",
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("backends")
    if marker is None:
        return  # the ``backend`` fixture's default
    unknown = set(marker.args) - set(BACKENDS)
    if unknown:
        raise pytest.UsageError(f"unknown backends {sorted(unknown)}; known: {BACKENDS}")
    metafunc.parametrize("backend", marker.args)


@pytest.fixture(autouse=True)
def _no_database_uri_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own ``EVOSCIENTIST_DATABASE_URI`` must not redirect the tests."""
    monkeypatch.delenv("EVOSCIENTIST_DATABASE_URI", raising=False)


@pytest.fixture
def backend() -> str:
    """The checkpoint store's kind; ``@pytest.mark.backends(...)`` parametrizes it."""
    return "sqlite"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the seeded ``sessions.db`` lives (not created until a writer opens it)."""
    return tmp_path / "data" / "sessions.db"


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """One throwaway PostgreSQL database for the run (skips without a server; fails
    under CI)."""
    with session_database() as uri:
        yield uri


@pytest.fixture
async def store(
    backend: str, db_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Store]:
    """The store the test seeds and reads: ``db_path``, or a PostgreSQL store of the
    test's own (a new schema in the run's database: empty until a writer sets its
    tables up; dropped afterwards)."""
    if backend == "postgres":
        async with temporary_schema(request.getfixturevalue("postgres_database")) as uri:
            yield Store("postgres", uri)
    else:
        yield Store("sqlite", str(db_path))


@pytest.fixture
async def seeder(store: Store) -> AsyncIterator[Seeder]:
    """A real writer on ``store`` (``AsyncSqliteSaver`` or ``AsyncPostgresSaver``) and
    helpers that run graphs."""
    async with open_seeder(store) as seeder:
        yield seeder


@pytest.fixture
async def client(store: Store) -> AsyncIterator[httpx.AsyncClient]:
    """In-process HTTP to ``create_app`` serving ``store`` directly (no API fallback)."""
    async with answer_client(store) as client:
        yield client


# ---- ready-made threads (each seeded into ``store`` by a real graph run)


@pytest.fixture
async def agent_thread(seeder: Seeder) -> SeededThread:
    """The project's agent: tool call, tool result, reasoning + text answer."""
    return await seeder.agent()


@pytest.fixture
async def two_turn_agent_thread(seeder: Seeder) -> SeededThread:
    return await seeder.agent(("First question?", "Second question?"))


@pytest.fixture
async def paused_thread(seeder: Seeder) -> SeededThread:
    """Mid-run: stopped before the agent node (non-empty ``next``)."""
    return await seeder.paused_before()


@pytest.fixture
async def scenario_threads(seeder: Seeder) -> list[SeededThread]:
    """One thread per kind of run (agent, reasoning formats, paused, interrupted,
    failed, subgraph, compacted DeltaChannel, new turn without answer) in one store."""
    return await seeder.every_scenario()
