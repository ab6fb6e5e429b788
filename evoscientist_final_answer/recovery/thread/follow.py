"""What one run's v2 thread stream has shown: its own events among the thread's, the text
of each of its root messages, the cursor a re-opened stream resumes from, and whether
the run's end was seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# The root lifecycle phases after which a run does no more (``interrupted`` covers both
# a pause for input and a cancel: the server maps the run's status to the phase).
TERMINAL_PHASES = frozenset({"completed", "failed", "interrupted"})
_RUN_OF_EVENT = re.compile(r"^synth:([^:]+):lc\|")


def _params(event: dict[str, Any]) -> dict[str, Any]:
    params = event.get("params")
    return params if isinstance(params, dict) else {}


def _data(event: dict[str, Any]) -> dict[str, Any]:
    data = _params(event).get("data")
    return data if isinstance(data, dict) else {}


def is_root(event: dict[str, Any]) -> bool:
    return not _params(event).get("namespace")


def run_named_by(event: dict[str, Any]) -> str | None:
    """The run a lifecycle event's id names, if it names one."""
    if event.get("method") != "lifecycle":
        return None
    found = _RUN_OF_EVENT.match(str(event.get("event_id") or ""))
    return found.group(1) if found else None


@dataclass
class ShownMessage:
    """One root AI message as the stream showed it."""

    id: str
    text: str = ""
    text_block: int | None = None
    blocks: int = 0
    finished: bool = False


@dataclass(frozen=True)
class Position:
    """The last event a connection delivered that carries a ``seq``: a re-opened
    stream asked for what follows ``seq - 1`` must replay exactly this event first."""

    seq: int
    event_id: str | None


@dataclass
class RunFollow:
    """Feed it every event of the thread stream; it says which are the run's.

    A thread stream replays every run the server still holds for the thread, oldest first,
    so a stream opened for a new run shows the earlier runs first. Their events are told
    apart by the root lifecycle events, whose ids name their run (``synth:<run_id>:lc|…``);
    nothing is skipped unless such an id names another run."""

    run_id: str | None = None
    ended: str | None = None
    position: Position | None = None
    messages: dict[str, ShownMessage] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)
    _current_run: str | None = None
    _open: ShownMessage | None = None

    def observe(self, event: dict[str, Any]) -> bool:
        """Take one event; True when it is this run's (to be passed on)."""
        seq = event.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            self.position = Position(seq, event.get("event_id"))
        if (named := run_named_by(event)) is not None:
            self._current_run = named
        if not self._is_ours():
            return False
        if event.get("method") == "messages" and is_root(event):
            self._message(_data(event))
        elif event.get("method") == "lifecycle" and is_root(event):
            phase = _data(event).get("event")
            if phase in TERMINAL_PHASES:
                self.ended = phase
        return True

    def _is_ours(self) -> bool:
        return self.run_id is None or self._current_run in (None, self.run_id)

    def _message(self, data: dict[str, Any]) -> None:
        kind = data.get("event")
        if kind == "message-start":
            if data.get("role") not in (None, "ai", "assistant"):
                self._open = None
                return
            key = str(data.get("id") or f"#{len(self._order)}")
            if key not in self.messages:
                self.messages[key] = ShownMessage(key)
                self._order.append(key)
            self._open = self.messages[key]
            return
        shown = self._open
        if shown is None:
            return
        index = data.get("index")
        if kind == "content-block-start":
            shown.blocks += 1
            content = data.get("content")
            if isinstance(content, dict) and content.get("type") == "text":
                shown.text_block = index if isinstance(index, int) else shown.text_block
        elif kind == "content-block-delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and delta.get("type") == "text-delta":
                shown.text += str(delta.get("text") or "")
                shown.text_block = index if isinstance(index, int) else shown.text_block
        elif kind == "message-finish":
            shown.finished = True
            self._open = None

    @property
    def last_shown(self) -> ShownMessage | None:
        return self.messages[self._order[-1]] if self._order else None


def continues(event: dict[str, Any], resume: Position) -> bool:
    """Whether ``event``, the first with a ``seq`` on a stream re-opened after
    ``resume.seq - 1``, is the event ``resume`` names: the same server still holds the
    run's events in the same order. After a restart it holds none of them, and the
    numbers it gives a run it runs again name other events."""
    return event.get("seq") == resume.seq and event.get("event_id") == resume.event_id
