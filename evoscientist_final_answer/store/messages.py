"""Rebuild a checkpoint's ``messages`` value exactly as the graph would see it: a
``DeltaChannel`` snapshot plus the writes since, replayed through the channel's own
``replay_writes`` and reducer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph._internal._typing import MISSING  # the channel's own "no value" marker
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph.message import _messages_delta_reducer

from evoscientist_final_answer.answer.extract import coerce_messages
from evoscientist_final_answer.answer.result import FinalAnswer, answer_from_checkpoint
from evoscientist_final_answer.store.errors import StoreUnavailable

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


async def saver_answer(
    saver: BaseCheckpointSaver,
    thread_id: str,
    checkpoint_id: str,
    *,
    check: Callable[[Any, CheckpointTuple], Awaitable[None]] | None = None,
) -> FinalAnswer:
    """The full decode, any saver: it decodes the checkpoint, its pending writes and its
    DeltaChannel history; ``check(saver, tup)`` may refuse the tuple first."""
    config = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": "",
            "checkpoint_id": checkpoint_id,
        }
    }
    tup = await saver.aget_tuple(config)
    if tup is None:  # pruned between the two queries
        raise StoreUnavailable(f"checkpoint {checkpoint_id} vanished while reading")
    if check is not None:
        await check(saver, tup)
    messages = await checkpoint_messages(saver, tup)
    return answer_from_checkpoint(
        thread_id=thread_id,
        newest_first=reversed(messages),
        channel_values=tup.checkpoint.get("channel_values", {}),
        pending_writes=tup.pending_writes or [],
        metadata=tup.metadata,
        checkpoint_id=checkpoint_id,
        ts=tup.checkpoint.get("ts"),
        source="checkpointer",
        parent_checkpoint_id=(
            tup.parent_config["configurable"].get("checkpoint_id") if tup.parent_config else None
        ),
    )
