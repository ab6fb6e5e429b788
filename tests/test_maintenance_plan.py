"""``maintenance.plan``: what a prune deletes, frees and leaves parentless; which delta
channels a checkpoint is rebuilt from. (The walk over real threads, both backends:
``tests/test_maintenance.py``.)"""

from __future__ import annotations

import pytest

from EvoScientist.maintenance.plan import Row, channels_to_seed, deletions, thread_ids_to_prune


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
