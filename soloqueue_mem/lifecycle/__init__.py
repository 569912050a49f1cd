"""Lifecycle: gc, consolidate, extraction and decay (SPEC §3.3, §3.6)."""
