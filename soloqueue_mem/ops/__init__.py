"""Whole-store operations: statistics, the demo, (later) verify, export and import."""
