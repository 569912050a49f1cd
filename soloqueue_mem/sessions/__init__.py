"""L2 session logs: JSONL (canonical) and Markdown per session, indexed in memory.db."""
