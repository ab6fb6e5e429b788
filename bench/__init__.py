"""``make bench``: the final-answer route against the floor and ``GET /threads/{id}/state``."""
