"""What the langgraph server knows about a thread, beside its checkpoints: its status,
its runs and who started them, and a way to wait for its status to change
(``view.ServerView``); and where this process reads from, decided once (``placement``)."""
