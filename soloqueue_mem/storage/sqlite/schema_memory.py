"""The ordered migrations of memory.db; position in the list is the schema version.

Each migration lives beside the code that owns its tables. Never edit, reorder or
remove a shipped entry: append a new one.
"""

from __future__ import annotations

from soloqueue_mem.context.schema import m004_create_token_cache
from soloqueue_mem.memory.schema import (
    m003_create_memories,
    m005_create_episodes,
    m006_create_scratchpad,
    m007_add_memories_archived_at,
    m009_create_working_memory,
    m010_add_memories_fixed_expiry,
    m011_create_attachments,
    m012_create_remember_events,
    m013_reindex_memories_as_bigrams,
    m015_index_retired_memories,
    m017_add_memories_replaced_value,
    m018_rederive_memories_replaced_value,
    m019_rederive_memories_replaced_value,
    m020_rederive_memories_replaced_value,
    m021_rederive_memories_replaced_value,
    m022_rederive_memories_replaced_value,
    m023_rederive_memories_replaced_value,
    m024_rederive_memories_replaced_value,
    m025_rederive_memories_replaced_value,
    m026_rederive_memories_replaced_value,
    m027_rederive_memories_replaced_value,
)
from soloqueue_mem.semantic.schema import m008_create_embedding_cache, m016_version_embeddings
from soloqueue_mem.sessions.schema import (
    m001_create_turns,
    m002_index_turns_by_session,
    m014_reindex_turns_as_bigrams,
)

MIGRATIONS = [
    m001_create_turns,
    m002_index_turns_by_session,
    m003_create_memories,
    m004_create_token_cache,
    m005_create_episodes,
    m006_create_scratchpad,
    m007_add_memories_archived_at,
    m008_create_embedding_cache,
    m009_create_working_memory,
    m010_add_memories_fixed_expiry,
    m011_create_attachments,
    m012_create_remember_events,
    m013_reindex_memories_as_bigrams,
    m014_reindex_turns_as_bigrams,
    m015_index_retired_memories,
    m016_version_embeddings,
    m017_add_memories_replaced_value,
    m018_rederive_memories_replaced_value,
    m019_rederive_memories_replaced_value,
    m020_rederive_memories_replaced_value,
    m021_rederive_memories_replaced_value,
    m022_rederive_memories_replaced_value,
    m023_rederive_memories_replaced_value,
    m024_rederive_memories_replaced_value,
    m025_rederive_memories_replaced_value,
    m026_rederive_memories_replaced_value,
    m027_rederive_memories_replaced_value,
]
