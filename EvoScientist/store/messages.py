"""Rebuild a checkpoint's ``messages`` value exactly as the graph would see it.

A ``DeltaChannel`` stores messages only at snapshot steps; elsewhere the value is the
nearest snapshot plus the writes of every step since, replayed through the channel's
own ``replay_writes`` and reducer, so ``Overwrite`` and ``RemoveMessage`` behave as
they did live.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph._internal._typing import MISSING  # the channel's own "no value" marker
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph.message import _messages_delta_reducer

from EvoScientist.answer.extract import coerce_messages

MESSAGES = "messages"
DELTA_COUNTERS = "counters_since_delta_snapshot"


def is_delta_channel(metadata: Mapping[str, Any], channel: str = MESSAGES) -> bool:
    counters = metadata.get(DELTA_COUNTERS)
    return isinstance(counters, Mapping) and channel in counters


def stored_value(value: Any) -> Any:
    return value.value if isinstance(value, _DeltaSnapshot) else value


def replay(history: Mapping[str, Any]) -> list[Any]:
    channel = DeltaChannel(_messages_delta_reducer).from_checkpoint(history.get("seed", MISSING))
    channel.replay_writes(history.get("writes", []))
    return list(channel.value)


async def checkpoint_messages(
    saver: BaseCheckpointSaver, tup: CheckpointTuple
) -> list[BaseMessage]:
    values = tup.checkpoint.get("channel_values", {})
    if MESSAGES in values:
        raw = stored_value(values[MESSAGES])
    elif is_delta_channel(tup.metadata):
        history = await saver.aget_delta_channel_history(config=tup.config, channels=[MESSAGES])
        raw = replay(history[MESSAGES])
    else:
        raw = []
    if not isinstance(raw, list | tuple):
        raw = [raw]
    return coerce_messages(raw)
