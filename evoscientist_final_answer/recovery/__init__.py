"""The client half of stream-drop recovery (the WebUI spec's F1–F3, F2a) in Python.

Stream a run through ``langgraph_sdk`` with its own resume as the first layer; when
the stream ends — cleanly or not — reconcile with the final-answer route, replacing
(never appending to) what the stream showed, and follow the run until it settles.
"""

from evoscientist_final_answer.recovery.client import stream_with_recovery

__all__ = ["stream_with_recovery"]
