"""``tail_events``: what the stream did not show of a run, from the route's answer, in
the events the server would have sent."""

from __future__ import annotations

from typing import Any

import pytest

from evoscientist_final_answer.recovery.thread.follow import RunFollow
from evoscientist_final_answer.recovery.thread.tail import AnswerDiverged, RunLost, tail_events
from tests.recovery.thread.events import Wire, shown_text

ANSWER = "The whole answer, to the last word."


def answer(
    status: str = "success", content: str = ANSWER, message_id: str | None = "m1", **more: Any
) -> dict[str, Any]:
    return {
        "status": status,
        "content": content,
        "message_id": message_id,
        "thread_id": "t",
        "run_id": "r",
        "complete": True,
        "error": None,
        "interrupts": [],
        **more,
    }


def followed(*events: dict[str, Any]) -> RunFollow:
    follow = RunFollow(run_id="r")
    for event in events:
        follow.observe(event)
    return follow


def test_the_rest_of_a_message_cut_mid_answer_then_its_end() -> None:
    wire = Wire()
    shown = wire.message("m1", "The whole ", "answer", finish=False)
    tail = tail_events(followed(*shown), answer(), 1)
    assert shown_text(shown + tail) == ANSWER
    kinds = [(e["method"], e["params"]["data"]["event"]) for e in tail]
    assert kinds == [
        ("messages", "content-block-delta"),
        ("messages", "content-block-finish"),
        ("messages", "message-finish"),
        ("lifecycle", "completed"),
    ]
    assert tail[1]["params"]["data"]["content"] == {"type": "text", "text": ANSWER}
    assert all(e["params"]["namespace"] == [] and "seq" not in e for e in tail)
    assert len({e["event_id"] for e in tail}) == len(tail)


def test_a_message_never_shown_comes_whole() -> None:
    tail = tail_events(followed(), answer(), 1)
    assert shown_text(tail) == ANSWER
    assert tail[0]["params"]["data"] == {"event": "message-start", "role": "ai", "id": "m1"}


def test_a_message_cut_before_its_text_began_gets_a_text_block() -> None:
    wire = Wire()
    shown = wire.message("m1", finish=False)[:3]  # its reasoning only
    tail = tail_events(followed(*shown), answer(), 1)
    assert shown_text(tail) == ANSWER
    assert tail[0]["params"]["data"]["event"] == "content-block-start"
    assert tail[0]["params"]["data"]["index"] == 1  # after the reasoning block


def test_a_run_ran_again_under_a_new_id_continues_the_message_shown() -> None:
    """After a restart the server runs the run again and its answer has another message
    id: the text already shown is not shown twice."""
    wire = Wire()
    shown = wire.message("attempt-1", "The whole ", finish=False)
    tail = tail_events(followed(*shown), answer(message_id="attempt-2"), 1)
    assert shown_text(shown + tail) == ANSWER


def test_an_answer_that_does_not_begin_with_what_was_shown_is_refused() -> None:
    wire = Wire()
    shown = wire.message("m1", "Something else", finish=False)
    with pytest.raises(AnswerDiverged):
        tail_events(followed(*shown), answer(), 1)


def test_an_interrupted_run_asks_for_its_input() -> None:
    tail = tail_events(
        followed(),
        answer("interrupted", content="", interrupts=[{"id": "i1", "value": "Approve?"}]),
        1,
    )
    assert [e["method"] for e in tail] == ["input.requested", "lifecycle"]
    assert tail[0]["params"]["data"] == {"interrupt_id": "i1", "value": "Approve?"}
    assert tail[1]["params"]["data"] == {"event": "interrupted"}


@pytest.mark.parametrize(
    ("code", "phase"),
    [("run_failed", "failed"), ("run_cancelled", "interrupted"), ("run_stopped", "completed")],
)
def test_a_run_that_ended_in_error_ends_as_the_server_ends_it(code: str, phase: str) -> None:
    error = {"code": code, "message": "RuntimeError: down", "retryable": False}
    tail = tail_events(followed(), answer("error", content="", error=error), 1)
    end = tail[-1]["params"]["data"]
    assert end["event"] == phase
    assert end.get("error") == ("RuntimeError: down" if phase == "failed" else None)


def test_a_lost_run_is_an_error_naming_it() -> None:
    error = {"code": "run_lost", "message": "nothing is executing it", "retryable": False}
    with pytest.raises(RunLost, match="run r of thread t was lost: nothing is executing it"):
        tail_events(followed(), answer("error", error=error), 1)
