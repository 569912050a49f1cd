"""The public Python API (``soloqueue_mem.Store``), the JSON shapes of its values, and
the MCP server and HTTP API built on it (issue 13)."""
