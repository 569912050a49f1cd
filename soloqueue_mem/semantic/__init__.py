"""The optional offline dense channel (issue 11): embeddings cached in memory.db,
brute-force cosine search with numpy, and the ``dense`` recall channel.

Importing this package (or :mod:`.dense`, :mod:`.index`) imports neither numpy nor the
model; they load inside the functions that need them, only when ``search_backend`` is
``hybrid`` or ``dense`` and the ``semantic`` extra is installed.
"""
