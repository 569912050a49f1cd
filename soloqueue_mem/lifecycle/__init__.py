"""Lifecycle: gc, consolidate, locks and decay (SPEC §3.3, §3.6). Not built yet."""
