"""The SQLite back end: the data directory's database files, opened by name
(:mod:`.stores`), and the ordered migrations of each (``schema_*``)."""
