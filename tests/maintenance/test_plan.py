"""``maintenance.plan`` and the pure half of ``maintenance.rollback``: what a prune
deletes, frees and leaves parentless; which delta channels a checkpoint is rebuilt
from; what an unfinished head keeps; where a rollback's gap is bridged and which blobs
it frees. (The walk over real threads, both backends: ``tests/maintenance/test_maintenance.py``,
``tests/maintenance/test_rollback.py``.)"""

from __future__ import annotations

import pytest
from langgraph.checkpoint.base import CheckpointTuple

from evoscientist_final_answer.maintenance.plan import (
    Row,
    channels_to_seed,
    deletions,
    previous_run_head,
    thread_ids_to_prune,
)
from evoscientist_final_answer.maintenance.rollback import freed_versions, nearest_survivor


def checkpoint(values: dict[str, object], versions: dict[str, str]) -> dict[str, object]:
    return {"v": 4, "channel_values": values, "channel_versions": versions}


def test_a_counted_channel_without_a_value_is_rebuilt() -> None:
    counters = {"counters_since_delta_snapshot": {"messages": [1, 2]}}
    stored = checkpoint({}, {"messages": "3", "branch:to:agent": "3"})
    assert channels_to_seed(stored, counters) == {"messages"}


def test_a_snapshot_or_an_unwritten_channel_needs_no_ancestor() -> None:
    counters = {"counters_since_delta_snapshot": {"messages": [0, 1], "notes": [0, 1]}}
    snapshot = checkpoint({"messages": ["…"]}, {"messages": "3"})
    assert channels_to_seed(snapshot, counters) == set()  # notes: no version yet
    assert channels_to_seed(checkpoint({}, {"messages": "3"}), {}) == set()


def test_a_langgraph_js_delta_thread_rebuilds_every_channel_without_a_value() -> None:
    stored = checkpoint({"count": 1}, {"count": "2", "messages": "2"})
    assert channels_to_seed(stored, {"delta_writes_versioned": True}) == {"messages"}


def test_deletions_free_only_blobs_no_kept_checkpoint_references() -> None:
    rows = [
        Row("", "1", None, versions={"messages": "v1", "model": "m1"}),
        Row("", "2", "1", versions={"messages": "v2", "model": "m1"}),
        Row("", "3", "2", versions={"messages": "v3", "model": "m1"}),
        Row("sub:task", "a", None, versions={"x": "x1"}),
    ]

    (gone,) = deletions(rows, lambda r: r.checkpoint_id in {"1", "2"})

    assert gone.ns == ""
    assert gone.checkpoint_ids == ["1", "2"]
    assert gone.orphans == ["3"]
    assert gone.freed == {"messages": {"v1", "v2"}}  # m1 is still the head's


def test_nothing_doomed_deletes_nothing() -> None:
    assert deletions([Row("", "1", None)], lambda r: False) == []


def test_prune_arguments() -> None:
    assert thread_ids_to_prune(("a", "b"), "delete") == ["a", "b"]
    with pytest.raises(TypeError):
        thread_ids_to_prune("ab", "keep_latest")
    with pytest.raises(ValueError, match="Unknown prune strategy"):
        thread_ids_to_prune(["a"], "oldest")


def test_the_gap_is_bridged_to_the_nearest_surviving_ancestor() -> None:
    gone = {r.checkpoint_id: r for r in [Row("", "3", "2"), Row("", "2", "1")]}
    assert nearest_survivor("3", gone) == "1"
    assert nearest_survivor("1", gone) == "1"
    assert nearest_survivor("2", {"2": Row("", "2", None)}) is None


def test_a_rollback_frees_only_versions_its_rows_introduced_and_nothing_later_uses() -> None:
    before = {"1": Row("", "1", None, versions={"model": "m1", "messages": "v1"})}
    gone = [
        Row("", "2", "1", versions={"model": "m1", "messages": "v2"}),
        Row("", "3", "2", versions={"model": "m1", "messages": "v3", "notes": "n3"}),
    ]
    later = [Row("", "4", "3", versions={"model": "m1", "messages": "v4", "notes": "n3"})]

    assert freed_versions(gone, before, later) == {"messages": {"v2", "v3"}}
    # A parent already gone: what its child introduced is unknown, so nothing of it.
    assert freed_versions(gone[1:], {}, later) == {}


def test_an_unfinished_head_keeps_the_previous_runs_newest_checkpoint() -> None:
    rows = [
        Row("", "1", None, {"run_id": "a"}),
        Row("", "2", "1", {"run_id": "a"}),
        Row("", "3", "2", {"run_id": "b"}),
        Row("", "4", "3", {"run_id": "b"}),
    ]
    pending = tuple_("4", "3", {"run_id": "b"}, {"branch:to:review": None})
    assert previous_run_head(rows, pending) == "2"
    assert previous_run_head(rows, tuple_("4", "3", {"run_id": "b"}, {})) is None
    assert previous_run_head(rows, tuple_("4", "3", {}, {"branch:to:review": None})) is None


def tuple_(
    checkpoint_id: str, parent: str, metadata: dict[str, object], values: dict[str, object]
) -> CheckpointTuple:
    def config(c: str) -> dict[str, object]:
        return {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": c}}

    stored = {**checkpoint(values, {}), "id": checkpoint_id}
    return CheckpointTuple(config(checkpoint_id), stored, metadata, config(parent))
