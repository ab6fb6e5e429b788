"""``RunFollow``: which of a thread stream's events are the run's, what its messages
showed, where a re-opened stream resumes, and whether the run's end was seen."""

from __future__ import annotations

from evoscientist_final_answer.recovery.thread.follow import Position, RunFollow, continues
from tests.recovery.thread.events import Wire


def test_the_events_of_earlier_runs_on_the_thread_are_not_the_runs() -> None:
    """A thread stream replays every run the server holds for the thread: the earlier
    run's events, and its end, are told apart by its lifecycle ids."""
    wire = Wire()
    earlier = [
        wire.lifecycle("run-1", "running"),
        *wire.message("m1", "old answer"),
        wire.lifecycle("run-1", "completed"),
    ]
    ours = [wire.lifecycle("run-2", "running"), *wire.message("m2", "new ", "answer")]
    follow = RunFollow(run_id="run-2")
    assert [follow.observe(e) for e in earlier] == [False] * len(earlier)
    assert follow.ended is None and follow.messages == {}
    assert all(follow.observe(e) for e in ours)
    assert follow.messages["m2"].text == "new answer" and follow.messages["m2"].finished
    assert follow.observe(wire.lifecycle("run-2", "completed")) and follow.ended == "completed"


def test_a_run_not_known_yet_takes_every_event() -> None:
    """Before ``run.start`` answered (or without a run id in the lifecycle ids), nothing
    is skipped: only an id naming another run skips."""
    wire = Wire()
    follow = RunFollow()
    assert follow.observe(wire.lifecycle("run-1", "running"))
    assert follow.observe(
        wire.event("messages", {"event": "message-start", "role": "ai", "id": "m"})
    )
    unnamed = RunFollow(run_id="run-2")
    assert unnamed.observe(wire.event("lifecycle", {"event": "running"}, event_id="elsewhere-1"))


def test_text_is_kept_per_message_and_only_at_the_root() -> None:
    wire = Wire()
    follow = RunFollow(run_id="r")
    for event in wire.message("m1", "first", finish=True) + wire.message("m2", "sec", finish=False):
        follow.observe(event)
    follow.observe(
        wire.event(
            "messages",
            {
                "event": "content-block-delta",
                "index": 0,
                "delta": {"type": "text-delta", "text": "sub"},
            },
            namespace=("tools:1",),
        )
    )
    assert (follow.messages["m1"].text, follow.messages["m1"].finished) == ("first", True)
    assert (follow.messages["m2"].text, follow.messages["m2"].finished) == ("sec", False)
    assert follow.messages["m2"].text_block == 1
    assert follow.last_shown is follow.messages["m2"]
    # A tool's message starts no AI message: its text is not an answer's.
    follow.observe(wire.event("messages", {"event": "message-start", "role": "tool", "id": "t"}))
    follow.observe(
        wire.event(
            "messages",
            {
                "event": "content-block-delta",
                "index": 0,
                "delta": {"type": "text-delta", "text": "tool"},
            },
        )
    )
    assert "t" not in follow.messages and follow.messages["m2"].text == "sec"


def test_an_interrupt_and_a_failure_end_the_run_too() -> None:
    for phase in ("failed", "interrupted"):
        wire = Wire()
        follow = RunFollow(run_id="r")
        follow.observe(wire.lifecycle("r", "running"))
        assert follow.ended is None
        follow.observe(wire.lifecycle("r", phase))
        assert follow.ended == phase
    sub = RunFollow(run_id="r")
    sub.observe(
        Wire().event(
            "lifecycle",
            {"event": "completed"},
            event_id="synth:r:lc|tools:1|completed",
            namespace=("tools:1",),
        )
    )
    assert sub.ended is None  # a subgraph's end is not the run's


def test_the_position_a_re_opened_stream_resumes_from() -> None:
    wire = Wire()
    follow = RunFollow(run_id="r")
    last = wire.lifecycle("r", "running")
    follow.observe(last)
    assert follow.position == Position(last["seq"], last["event_id"])
    assert continues(last, follow.position)
    assert not continues({**last, "event_id": "another"}, follow.position)  # a restarted server's
    assert not continues(wire.lifecycle("r", "completed"), follow.position)
