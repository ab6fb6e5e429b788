"""The checkpointer ``langgraph.json`` hands to ``langgraph dev``.

Runs made through the API land in ``sessions.db``, the same file the TUI uses, so the
final-answer route reads one store whichever way a run was started.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from EvoScientist import settings


@asynccontextmanager
async def sessions_checkpointer() -> AsyncIterator[AsyncSqliteSaver]:
    path = settings.sessions_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        await saver.setup()
        yield saver
