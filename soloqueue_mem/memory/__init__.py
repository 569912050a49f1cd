"""L3 semantic memory and multi-path recall (SPEC §3.4-3.5)."""
