"""Store maintenance for the checkpointer ``langgraph.json`` hands to ``langgraph dev``.

langgraph-api asks a custom checkpointer for ``aprune``, ``adelete_for_runs`` and
``acopy_thread`` (and warns at start-up when one is missing). ``sqlite`` and
``postgres`` add them to langgraph's ``AsyncSqliteSaver`` and ``AsyncPostgresSaver``
with the semantics ``langgraph.checkpoint.base`` documents, ``DeltaChannel`` threads
included; ``plan`` decides what ``keep_latest`` keeps; ``gate`` drops the puts of a run
once it is deleted, so a rollback's deletion is final while the run still winds down.
(No imports here: a SQLite deployment never loads the PostgreSQL driver.)
"""
