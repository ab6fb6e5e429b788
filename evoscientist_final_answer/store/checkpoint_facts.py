"""Whether a checkpoint may answer a request, from its metadata alone, kept per checkpoint
since metadata never changes once written: a repeat poll reads no metadata at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from evoscientist_final_answer.store.api.reader import AUTH_USER_KEY


@dataclass(frozen=True, slots=True)
class CheckpointFacts:
    """What decides whether a checkpoint may answer; metadata never changes once written.

    The newest root checkpoint answers unless its metadata says another agent wrote it (a
    thread shared by several agents), another run (a request for ``run_id``), or another
    user's run (an authenticated caller; langgraph-api records ``langgraph_auth_user_id``)."""

    agent_name: str | None
    run_id: str | None
    user_id: str | None

    @classmethod
    def of(cls, metadata_blob: bytes | str | None) -> CheckpointFacts:
        try:
            metadata = json.loads(metadata_blob) if metadata_blob is not None else {}
        except ValueError:
            metadata = {}
        if not isinstance(metadata, dict):
            metadata = {}

        def text(key: str) -> str | None:
            value = metadata.get(key)
            return None if value is None else str(value)

        return cls(text("agent_name"), text("run_id"), text(AUTH_USER_KEY))

    def answers(self, agent_name: str | None, run_id: str | None, user_id: str | None) -> bool:
        """``agent_name`` ``None``: rows of every agent answer."""
        return (
            (agent_name is None or self.agent_name in (None, agent_name))
            and (run_id is None or self.run_id == run_id)
            and (user_id is None or self.user_id == user_id)
        )
