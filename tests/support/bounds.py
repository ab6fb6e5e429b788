"""The bound that tells an answer given at once from one held, whatever the machine's load.

A request or a wait that must not be held asks for ``HELD_WAIT_S`` and must end within
``NOT_HELD_S``: held, it would take its whole wait; a loaded machine slows an answer past
half a second or a second, never past a third of that wait.
"""

HELD_WAIT_S = 30
NOT_HELD_S = HELD_WAIT_S / 3
