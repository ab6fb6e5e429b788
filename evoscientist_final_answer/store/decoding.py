"""Decode a head the way every checkpointer reader does, and say what a failure means.

Each backend decodes the answering checkpoint two ways, over a session of its own
(SQLite's one connection, a connection of PostgreSQL's pool): the lazy decode first,
the saver's own full decode for a shape the lazy path leaves to it
(``lazy.Unexpected``). What a failure tells a client must not depend on where the
thread is stored, so it is decided here, once:

- the store could not be read (its connection lost, a lock, the server gone):
  ``StoreUnavailable``, retryable. Which exceptions those are is the driver's
  business: the backend says (``StoreFailure``), and its session turns them into
  ``StoreUnavailable`` (a damaged ``sessions.db`` into ``StoreDamaged``);
- the rows were read and this process cannot make an answer of them (a damaged blob,
  an unknown or encrypted serializer, a checkpoint of another shape, a history pruned
  before any snapshot): ``CheckpointUnreadable``, not retryable, since asking again
  reads the same rows. A decoder may raise anything on bytes it does not expect, so
  every other exception is this one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.store import lazy
from evoscientist_final_answer.store.errors import CheckpointUnreadable, StoreUnavailable
from evoscientist_final_answer.store.messages import MESSAGES, is_delta_channel

logger = logging.getLogger(__name__)

# ``True`` for an exception that is the store failing to be read, not its data.
StoreFailure = Callable[[Exception], bool]
Decode = Callable[[], Awaitable[FinalAnswer]]


async def decode(
    thread_id: str,
    checkpoint_id: str,
    *,
    lazy_decode: Decode | None,
    full_decode: Decode,
    store_failure: StoreFailure,
) -> FinalAnswer:
    """The answer of ``checkpoint_id``: ``lazy_decode`` (when given), else or when it
    hands over, ``full_decode``. A store failure is raised as it is, for the backend's
    session to report; whatever else goes wrong is ``CheckpointUnreadable``."""
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
