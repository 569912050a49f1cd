"""Text utilities every search shares: CJK-aware indexing, segmentation, FTS5 queries.

Design (measured in ``benchmarks/``): the full-text index stores each CJK character as
its own token, so writing a turn needs no dictionary at all; a query is segmented with
jieba's algorithm over a compact SQLite lexicon built once from jieba's own dictionary,
and each word becomes an FTS5 phrase of its characters. Loading jieba itself costs
~1 s per process; the lexicon answers the few look-ups a query needs in milliseconds.
"""
