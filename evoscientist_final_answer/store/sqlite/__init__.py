"""The direct read of ``sessions.db`` (``AsyncSqliteSaver``'s tables). Each module has its
twin by the same name in ``store/postgres/`` and says how it differs; ``change_signal``
and ``wal_index`` (the file's writes and commit mark, for polls that run no query) are
SQLite's alone.
"""
