"""Decode a head the way every checkpointer reader does, and say what a failure means, in
one place, so what a client is told never depends on where the thread is stored.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from evoscientist_final_answer.answer.result import FinalAnswer, answer_from_checkpoint
from evoscientist_final_answer.store import delta, lazy
from evoscientist_final_answer.store.errors import CheckpointUnreadable, StoreUnavailable
from evoscientist_final_answer.store.messages import MESSAGES, is_delta_channel

logger = logging.getLogger(__name__)

# ``True`` for an exception that is the store failing to be read, not its data.
StoreFailure = Callable[[Exception], bool]
Decode = Callable[[], Awaitable[FinalAnswer]]


@dataclass(slots=True)
class CheckpointParts:
    """What a backend read of one root checkpoint, nothing built yet."""

    checkpoint_id: str
    parent_id: str | None
    metadata: Mapping[str, Any]
    ts: Any
    # Every channel's value but the messages', parsed, its ext records kept as
    # ``lazy.Ext`` (``lazy.parse``) or already plain values.
    channel_values: Mapping[str, Any]
    # The writes that decide the status (``__error__``, ``__interrupt__``,
    # ``__resume__``): ``(task_id, channel, type, value)``, in the order applied.
    pending_writes: Sequence[tuple[str, str, str, bytes]]
    # The messages value's entries, unbuilt (``lazy.messages_value``, ``delta.History.value``
    # or ``value_end.Newest``); None: the checkpoint stores no value of the channel.
    messages: Sequence[Any] | None


class PartsSource(Protocol):
    """One backend's fetch of one checkpoint's parts, for one lazy decode."""

    @property
    def serde(self) -> SerializerProtocol: ...

    async def checkpoint(self) -> CheckpointParts:
        """The checkpoint's row, as ``CheckpointParts``."""
        ...

    async def history(self, parent_id: str) -> delta.History:
        """The DeltaChannel's history below the checkpoint whose parent is
        ``parent_id``; ``pruned_history`` when it was pruned before any snapshot."""
        ...

    async def more(self, parts: CheckpointParts, need: lazy.PartNeeded) -> None:
        """Fetch what ``answer_from_parts`` found missing into ``parts`` (or into the
        ``delta.Seed`` its messages read from); ``lazy.Unexpected`` to hand over."""
        ...


def answer_from_parts(
    thread_id: str, parts: CheckpointParts, hook: lazy.ExtHook, serde: SerializerProtocol
) -> FinalAnswer:
    """The answer of a checkpoint's parts, building only the newest messages that
    decide it, with the serializer's own hook and ``loads_typed``: pure, whatever
    backend fetched the parts. ``lazy.PartNeeded`` when the messages reach a part not
    fetched yet; ``lazy.Unexpected`` for a shape left to the full decode."""
    messages = parts.messages if parts.messages is not None else ()
    return answer_from_checkpoint(
        thread_id=thread_id,
        newest_first=lazy.newest_first(messages, hook),
        channel_values={
            name: lazy.materialize(value, hook) for name, value in parts.channel_values.items()
        },
        pending_writes=[
            (task_id, channel, serde.loads_typed((type_, value)))
            for task_id, channel, type_, value in parts.pending_writes
        ],
        metadata=parts.metadata,
        checkpoint_id=parts.checkpoint_id,
        ts=parts.ts,
        source="checkpointer",
        parent_checkpoint_id=parts.parent_id,
    )


async def fetch_parts(source: PartsSource) -> CheckpointParts:
    """The checkpoint's parts; for a DeltaChannel checkpoint that stores no value of
    the channel, its messages are the history below it, folded as far as read."""
    parts = await source.checkpoint()
    if parts.messages is None and parts.parent_id and is_delta_channel(parts.metadata):
        parts.messages = (await source.history(parts.parent_id)).value()
    return parts


async def decode_parts(thread_id: str, source: PartsSource) -> FinalAnswer:
    """The lazy decode, any backend: ``fetch_parts``, then ``answer_from_parts``,
    fetching what it finds missing until it answers.

    The backend only fetches the parts (``PartsSource``: the checkpoint's row with its
    channel values and the writes that decide the status, its messages value or, for a
    DeltaChannel checkpoint that stores none, the history below it); the answer is made of
    them by a pure function that reads nothing of the store."""
    hook = lazy.ext_hook(source.serde)
    parts = await fetch_parts(source)
    while True:
        try:
            return answer_from_parts(thread_id, parts, hook, source.serde)
        except lazy.PartNeeded as need:  # nothing was built from what was missing: again
            await source.more(parts, need)


async def decode(
    thread_id: str,
    checkpoint_id: str,
    *,
    lazy_decode: Decode | None,
    full_decode: Decode,
    store_failure: StoreFailure,
) -> FinalAnswer:
    """The answer of ``checkpoint_id``: ``lazy_decode`` (when given), else or when it
    hands over (``lazy.Unexpected``), ``full_decode``, the saver's own.

    - The store could not be read (its connection lost, a lock, the server gone): the
      failure is raised as it is (the backend's ``StoreFailure`` says which exceptions
      those are), for its session to report as ``StoreUnavailable``, retryable (a damaged
      ``sessions.db``: ``StoreDamaged``).
    - Anything else means the rows were read and this process cannot make an answer of
      them (a damaged blob, an unknown or encrypted serializer, another shape, a history
      pruned before any snapshot): ``CheckpointUnreadable``, not retryable, since asking
      again reads the same rows."""
    try:
        if lazy_decode is not None:
            try:
                return await lazy_decode()
            except lazy.Unexpected as exc:
                logger.debug("thread %s: full decode (%s)", thread_id, exc)
        return await full_decode()
    except StoreUnavailable:
        raise  # told where it was raised: a row gone meanwhile, a history pruned
    except Exception as exc:
        if store_failure(exc):
            raise
        raise unreadable(f"checkpoint {checkpoint_id}", exc) from exc


def pruned_history(missing: str) -> CheckpointUnreadable:
    """A DeltaChannel checkpoint whose history lost an ancestor before reaching any
    stored value of the channel: its messages cannot be rebuilt. (langgraph's own walk
    stops silently at the gap, and an answer read from part of the history may be the
    wrong turn's.)"""
    return CheckpointUnreadable(
        f"message history pruned before any snapshot (ancestor {missing} is gone)"
    )


# ``(saver, thread_id, parent_id)``: the first link of the parent chain from
# ``parent_id`` up with no row behind it, or None when it reaches the thread's first
# checkpoint.
MissingAncestor = Callable[[Any, str, str], Awaitable[str | None]]


async def check_whole_history(
    saver: BaseCheckpointSaver, tup: CheckpointTuple, missing_ancestor: MissingAncestor
) -> None:
    """The full decode's check (``saver_answer(check=...)``): a DeltaChannel checkpoint
    without the channel's value must have its whole history behind it, else
    ``pruned_history`` (the lazy decodes tell it from the rows they walk)."""
    values = tup.checkpoint.get("channel_values", {})
    if MESSAGES in values or not is_delta_channel(tup.metadata) or tup.parent_config is None:
        return
    history = await saver.aget_delta_channel_history(config=tup.config, channels=[MESSAGES])
    if "seed" in history[MESSAGES]:
        return
    thread_id = tup.config["configurable"]["thread_id"]
    parent_id = tup.parent_config["configurable"]["checkpoint_id"]
    missing = await missing_ancestor(saver, thread_id, parent_id)
    if missing is not None:
        raise pruned_history(missing)


def unreadable(what: str, exc: Exception) -> CheckpointUnreadable:
    """``CheckpointUnreadable`` naming what could not be decoded and the decoder's reason
    (for the server log; a client sees only the code)."""
    return CheckpointUnreadable(f"{what}: {type(exc).__name__}: {exc}")
