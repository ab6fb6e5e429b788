"""Pure logic: turn a thread's checkpoint (or its API state) into a final answer.

Nothing in this package does I/O; the store readers in ``evoscientist_final_answer.store`` feed it.
"""
