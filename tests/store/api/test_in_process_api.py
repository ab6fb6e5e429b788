"""A PostgreSQL outage inside a real ``langgraph dev``: the route answers a retryable
503 within its read deadline, and leaves nothing behind — no in-process API request
still waiting for the checkpointer's pool (its timeout, shortened here), no 500 in the server's log.

The outage: the server's database is dropped (``WITH (FORCE)``, which ends its
sessions), so every reconnect fails. The machine's PostgreSQL keeps serving the others.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from langgraph_sdk import get_client
from psycopg import sql

from evoscientist_final_answer.http.service import READ_DEADLINE_SECONDS
from tests.support.postgres import admin_uri, session_database
from tests.support.reliability import assert_error
from tests.support.servers import ANSI_COLOUR, DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

# The checkpointer pool's wait for a connection (30 s unless set), shortened so that a
# request the route left waiting on it ends, and logs its 500, while the test watches;
# still longer than the route's read deadline, which must end the request first.
POOL_TIMEOUT_SECONDS = READ_DEADLINE_SECONDS + 3
WATCHED_SECONDS = POOL_TIMEOUT_SECONDS + 3
SERVER_ERROR = re.compile(r"\b500\b|Traceback|status=500")


@pytest.fixture
def database() -> Iterator[str]:
    with session_database() as uri:
        yield uri


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory, database: str) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("postgres-outage")
    env = {
        "EVOSCIENTIST_DATABASE_URI": database,
        "EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0",
        "EVOSCIENTIST_POSTGRES_POOL_TIMEOUT": str(POOL_TIMEOUT_SECONDS),
    }
    with langgraph_dev(root / "work", root / "data", env=env) as server:
        yield server


def drop(database: str) -> None:
    name = database.rsplit("/", 1)[1]
    with psycopg.connect(admin_uri(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


async def test_an_outage_leaves_no_request_behind(server: DevServer, database: str) -> None:
    client = get_client(url=server.url, api_key=None)
    try:
        thread_id = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            thread_id, "EvoScientist", input={"messages": [{"role": "user", "content": "q"}]}
        )
        await client.runs.join(thread_id, run["run_id"])
    finally:
        await client.aclose()
    path = f"/api/threads/{thread_id}/final-answer"
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        assert (await http.get(path)).status_code == 200
        before = len(server.log())
        drop(database)

        started = time.monotonic()
        response = await http.get(path)
        took = time.monotonic() - started
        assert_error(response, 503, "store_unavailable", retryable=True)
        assert took < READ_DEADLINE_SECONDS + 1.5, took

        # Past the pool's timeout: a request the route left running would end now.
        await asyncio.sleep(WATCHED_SECONDS - took)
    logged = ANSI_COLOUR.sub("", server.log()[before:])
    errors = [line for line in logged.splitlines() if SERVER_ERROR.search(line)]
    assert not errors, "\n".join(errors)[-3000:]
