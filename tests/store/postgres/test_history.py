"""What the PostgreSQL history walk (``store/postgres/history.py``) keeps between reads
(decoded DeltaChannel snapshots) never outlives the rows it came from, and a chain gone
between the decode's statements is retryable.

The lazy answer itself is held against the saver's full decode on every checkpoint of
real threads by ``tests/store/test_lazy_decoding.py`` (both backends); the SQLite walk's
own tests are in ``tests/store/sqlite/test_history.py``."""

from __future__ import annotations

import pytest

from evoscientist_final_answer.store.errors import StoreUnavailable
from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader
from tests.support.seeds import DELTA_PREAMBLE, Seeder, Store

pytestmark = pytest.mark.backends("postgres")


async def test_a_replaced_thread_is_not_read_from_a_kept_snapshot(
    store: Store, seeder: Seeder
) -> None:
    """The store replaced under a running reader (the thread's rows deleted, the same
    thread id written again with other messages): the snapshot kept from the old rows
    answers nothing."""
    # Updates ahead of the turns: each turn's last checkpoint falls between snapshots.
    shift = DELTA_PREAMBLE
    first = await seeder.chat(["old answer 1", "old answer 2"], mode="delta", preamble=shift)
    reader = store.reader()
    assert isinstance(reader, PostgresAnswerReader)
    try:
        assert (await reader.read(first.thread_id)).content == "old answer 2"
        assert reader._history.seeds, "the DeltaChannel's snapshot is kept decoded"
        await seeder.saver.adelete_thread(first.thread_id)
        await seeder.chat(
            ["new answer 1", "new answer 2", "new answer 3"],
            mode="delta",
            thread_id=first.thread_id,
            preamble=shift,
        )
        assert (await reader.read(first.thread_id)).content == "new answer 3"
    finally:
        await reader.close()


async def test_a_chain_gone_between_the_two_statements_is_unavailable(
    store: Store, seeder: Seeder
) -> None:
    """The DeltaChannel's history is read by a second statement: a thread deleted in
    between shows as an empty chain, a retryable failure, not an empty answer."""
    thread = await seeder.chat(["answer"], mode="delta")
    reader = store.reader()
    assert isinstance(reader, PostgresAnswerReader)
    try:
        await reader.read(thread.thread_id)
        await seeder.saver.adelete_thread(thread.thread_id)
        async with reader._db.session() as conn:
            with pytest.raises(StoreUnavailable, match="vanished"):
                await reader._history.walk(conn, thread.thread_id, "gone-checkpoint")
    finally:
        await reader.close()
