"""Shared fixtures: a checkpoint store seeded by real graphs (``seeder``, open for the
whole test so ``thread.state()`` can be compared with the route), and an in-process
client for the app reading it. ``@pytest.mark.backends("sqlite", "postgres")`` runs a
module or test once per backend; ``db_path`` is for tests of the SQLite file itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.grouping import pytest_collection_modifyitems  # noqa: F401  (a hook)
from tests.support.postgres import session_database, temporary_schema
from tests.support.seeds import BACKENDS, SeededThread, Seeder, Store, answer_client, open_seeder


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "backends(*names): run the test once per checkpoint store named "
        f"({', '.join(BACKENDS)}); unmarked tests use sqlite",
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
