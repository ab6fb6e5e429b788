"""Shared fixtures: a seeded ``sessions.db`` written by real graphs, and an in-process
client for the Starlette app reading it.

The writer (``seeder``) stays open for the whole test so ``thread.state()``
(``graph.aget_state``) can be compared with what the route answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.seeds import SeededThread, Seeder, answer_client, open_seeder


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the seeded ``sessions.db`` lives (not created until a writer opens it)."""
    return tmp_path / "data" / "sessions.db"


@pytest.fixture
async def seeder(db_path: Path) -> AsyncIterator[Seeder]:
    """A real ``AsyncSqliteSaver`` writer on ``db_path`` and helpers that run graphs."""
    async with open_seeder(db_path) as seeder:
        yield seeder


@pytest.fixture
async def client(db_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """In-process HTTP to ``create_app`` serving ``db_path`` directly (no API fallback)."""
    async with answer_client(db_path) as client:
        yield client


# ---- ready-made threads (each seeded into ``db_path`` by a real graph run)


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
