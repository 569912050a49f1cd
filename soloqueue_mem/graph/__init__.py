"""Seed 002's associative graph memory, one graph per (group, agent), in graph.db or the
PostgreSQL database (one storage interface, :mod:`.db`).

Nodes hold pieces of conversation (content, a short phrase, 3-5 keywords); directed
links carry a strength in [0, 1] and an optional relation name; a focus list (LRU of
``graph_max_focus_count``) holds the newest nodes. ``graph remember`` only enqueues;
a single worker per store processes the queue strictly in order (:mod:`.worker`).
"""
