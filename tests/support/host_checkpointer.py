"""A host's own checkpointer (``langgraph.json`` → ``checkpointer.path``), not ours: an
``AsyncSqliteSaver`` on a file that none of the route's settings names
(``$HOST_SESSIONS_DB``), stamping every checkpoint with the name of the graph that wrote
it, as upstream EvoScientist's saver stamps ``agent_name``."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

HOST_DB_VARIABLE = "HOST_SESSIONS_DB"
AGENT_PREFIX = "host-agent-"


class StampingSaver(AsyncSqliteSaver):
    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        graph = metadata.get("graph_id") or config.get("configurable", {}).get("graph_id")
        stamped: Any = {**metadata, "agent_name": f"{AGENT_PREFIX}{graph}"}
        return await super().aput(config, checkpoint, stamped, new_versions)


@asynccontextmanager
async def checkpointer() -> AsyncIterator[StampingSaver]:
    async with StampingSaver.from_conn_string(os.environ[HOST_DB_VARIABLE]) as saver:
        await saver.setup()
        yield saver
