"""The ordered migrations of graph.db (seed 002's associative graph); position in the
list is the schema version."""

from __future__ import annotations

from soloqueue_mem.graph.schema import m001_create_graph

MIGRATIONS = [m001_create_graph]
