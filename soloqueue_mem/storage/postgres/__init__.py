"""The PostgreSQL back end (issue 14, first phase): turns, their search, memories.

Selected by ``database_url = "postgresql://…"`` in config.toml or
``SOLOQUEUE_DATABASE_URL``; needs the ``postgres`` extra (psycopg). Everything here is
imported only when that back end is chosen.
"""
