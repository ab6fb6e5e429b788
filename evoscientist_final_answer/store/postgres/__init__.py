"""The direct read of a PostgreSQL checkpointer's database (``AsyncPostgresSaver``'s tables).

Each module has its twin, by the same name, in ``store/sqlite/`` and opens by saying
what it mirrors and how it differs: ``reader`` (which checkpoint answers, the cache,
long-polls), ``connection`` (the read-only pool and which failures are the store's),
``parts`` (the answering checkpoint's parts, for the shared decode in
``store/decoding.py``), ``history`` (the DeltaChannel history below a checkpoint).
PostgreSQL's alone: ``blobs`` (``bytea`` read where libpq received it).
"""
