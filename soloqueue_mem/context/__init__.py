"""L1 working memory: token counting and context building (SPEC §3.7). Not built yet."""
