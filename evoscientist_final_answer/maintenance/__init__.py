"""Store maintenance that langgraph-api asks of a custom checkpointer (``aprune``,
``adelete_for_runs``, ``acopy_thread``), for langgraph's SQLite and PostgreSQL savers,
``DeltaChannel`` threads included. No imports here: a SQLite deployment never loads the
PostgreSQL driver.
"""
