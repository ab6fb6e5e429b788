"""Whether a checkpoint may answer, from its metadata (``store/checkpoint_facts.py``)."""

from __future__ import annotations

import json

import pytest

from evoscientist_final_answer.store.checkpoint_facts import CheckpointFacts


def facts(**metadata: object) -> CheckpointFacts:
    return CheckpointFacts.of(json.dumps(metadata))


def test_a_checkpoint_answers_its_agent_run_and_user() -> None:
    checkpoint = facts(agent_name="EvoScientist", run_id="r1", langgraph_auth_user_id="alice")
    assert checkpoint.answers("EvoScientist", None, None)
    assert checkpoint.answers("EvoScientist", "r1", "alice")
    assert not checkpoint.answers("another agent", None, None)
    assert not checkpoint.answers("EvoScientist", "r2", None)
    assert not checkpoint.answers("EvoScientist", None, "bob")


def test_metadata_without_an_agent_answers_any_agent_but_no_named_run_or_user() -> None:
    checkpoint = facts(source="update")
    assert checkpoint.answers("EvoScientist", None, None)
    assert not checkpoint.answers("EvoScientist", "r1", None)
    assert not checkpoint.answers("EvoScientist", None, "alice")


@pytest.mark.parametrize("blob", [None, b"not json", "[1, 2]", '"text"'])
def test_unreadable_or_odd_metadata_is_no_metadata(blob: bytes | str | None) -> None:
    assert CheckpointFacts.of(blob) == CheckpointFacts(None, None, None)


def test_values_that_are_not_text_compare_as_text() -> None:
    assert facts(run_id=7).answers("EvoScientist", "7", None)
