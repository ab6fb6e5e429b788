"""The direct read of a PostgreSQL checkpointer's database (``AsyncPostgresSaver``'s tables).
Each module has its twin by the same name in ``store/sqlite/`` and says how it differs;
``blobs`` (``bytea`` read where libpq received it) is PostgreSQL's alone.
"""
