"""The ordered migrations of state.db; position in the list is the schema version."""

from __future__ import annotations

from soloqueue_mem.lifecycle.queue import m001_create_extraction_queue

MIGRATIONS = [m001_create_extraction_queue]
