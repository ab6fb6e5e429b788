"""The direct read of ``sessions.db`` (``AsyncSqliteSaver``'s tables).

Each module has its twin, by the same name, in ``store/postgres/`` and opens by saying
what it mirrors and how it differs: ``reader`` (which checkpoint answers, the cache,
long-polls), ``connection`` (the read-only connection and which failures are the
store's), ``parts`` (the answering checkpoint's parts, for the shared decode in
``store/decoding.py``), ``history`` (the DeltaChannel history below a checkpoint).
SQLite's alone: ``change_signal`` (the file's writes, for polls that run no query) and
``wal_index`` (the commit mark that vouches for a head where the file events cannot).
"""
