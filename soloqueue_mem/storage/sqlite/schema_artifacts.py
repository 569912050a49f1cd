"""The ordered migrations of artifacts.db; position in the list is the schema version."""

from __future__ import annotations

from soloqueue_mem.artifacts.schema import m001_create_artifacts

MIGRATIONS = [m001_create_artifacts]
