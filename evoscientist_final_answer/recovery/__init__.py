"""The client half of stream-drop recovery (the WebUI spec's F1–F3, F2a) in Python: stream
a run, then make what it showed the route's answer (replaced, never appended to).
"""

from evoscientist_final_answer.recovery.client import stream_with_recovery

__all__ = ["stream_with_recovery"]
