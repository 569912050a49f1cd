"""The storage back ends beneath the library: SQLite (the default) and PostgreSQL.

:class:`Backend` is what a back end offers the commands that run on either; the SQLite
one is today's code (``soloqueue_mem.sessions``, ``soloqueue_mem.memory``) on the data
directory's ``memory.db``, reached as before, and the PostgreSQL one is
:class:`soloqueue_mem.storage.postgres.backend.PostgresBackend`. :func:`database_url`
tells which.
"""
