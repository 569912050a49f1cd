"""Seed 004's recursive character splitter (``splitter.go``): chunks of at most 500
characters with 50 characters of overlap, split at the first separator of
``"\\n\\n"``, ``"\\n"``, ``" "``, ``""`` that the text contains.

A piece still longer than a chunk is split again with the next separators; pieces are
then merged back, joined by their separator, into chunks of at most ``size``; each
chunk starts with the last pieces (at most ``overlap`` characters) of the one before.
With ``""`` the pieces are characters, so CJK text without spaces is cut into exact
500-character windows overlapping by 50. Chunks are stripped; empty ones are dropped.
"""

from __future__ import annotations

CHUNK_SIZE = 500
CHUNK_OVERLAP = 50
SEPARATORS = ("\n\n", "\n", " ", "")


def split_text(
    text: str,
    size: int = CHUNK_SIZE,
    overlap: int = CHUNK_OVERLAP,
    separators: tuple[str, ...] = SEPARATORS,
) -> list[str]:
    if not 0 <= overlap < size:
        raise ValueError("overlap must be smaller than the chunk size")
    separator, rest = separators[-1], separators[:0]
    for number, candidate in enumerate(separators):
        if candidate == "" or candidate in text:
            separator, rest = candidate, separators[number + 1 :]
            break
    pieces = text.split(separator) if separator else list(text)
    chunks: list[str] = []
    short: list[str] = []
    for piece in pieces:
        if len(piece) <= size:
            short.append(piece)
            continue
        chunks += _merge(short, separator, size, overlap)
        short = []
        chunks += split_text(piece, size, overlap, rest) if rest else [piece]
    return chunks + _merge(short, separator, size, overlap)


def _merge(pieces: list[str], separator: str, size: int, overlap: int) -> list[str]:
    """Pieces joined into chunks of at most ``size``, each opening with the tail of
    the previous chunk (whole pieces, at most ``overlap`` characters)."""
    chunks: list[str] = []
    window: list[str] = []
    length = 0  # of separator.join(window)
    gap = len(separator)
    for piece in pieces:
        if window and length + gap + len(piece) > size:
            _emit(chunks, separator.join(window))
            while window and (length > overlap or length + gap + len(piece) > size):
                length -= len(window[0]) + (gap if len(window) > 1 else 0)
                window.pop(0)
        length += len(piece) + (gap if window else 0)
        window.append(piece)
    if window:
        _emit(chunks, separator.join(window))
    return chunks


def _emit(chunks: list[str], chunk: str) -> None:
    chunk = chunk.strip()
    if chunk:
        chunks.append(chunk)
