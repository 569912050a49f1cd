"""L1 working memory: token counting and the context builder (SPEC §3.7)."""
