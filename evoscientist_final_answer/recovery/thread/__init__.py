"""A thread stream (langgraph_sdk's v2 ``client.threads.stream``) that follows its run to
the run's end through cuts, outages and restarts: ``with_recovery(client).threads.stream(…)``.
"""

from evoscientist_final_answer.recovery.thread.stream import RecoveringThreadStream, with_recovery
from evoscientist_final_answer.recovery.thread.tail import AnswerDiverged, RunLost

__all__ = ["AnswerDiverged", "RecoveringThreadStream", "RunLost", "with_recovery"]
