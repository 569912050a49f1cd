"""The ordered migrations of state.db; position in the list is the schema version."""

from __future__ import annotations

from soloqueue_mem.lifecycle.schema import (
    m001_create_extraction_queue,
    m004_create_log_extractions,
)
from soloqueue_mem.state.schema import m002_create_kv_store, m003_create_session_state

MIGRATIONS = [
    m001_create_extraction_queue,
    m002_create_kv_store,
    m003_create_session_state,
    m004_create_log_extractions,
]
