"""Exact inner-product search in NumPy: the reference every index is held against.

It also answers the searches an approximate index cannot answer well, in every storage:
a filter that leaves a small subset of the corpus is searched exactly over that
subset's vectors (`exact_subset_limit`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["EXACT_SUBSET_MAX", "Ranked", "exact_search", "exact_subset_limit"]

#: Scores and keys, best first (key -1 pads a short answer).
Ranked = tuple[NDArray[np.float32], NDArray[np.int64]]

#: A filter that admits at most this many vectors is searched exactly over them: ~1.5 ms
#: for 20k vectors, where graph search restricted to a small fraction of the corpus
#: walks many rejected nodes and can come back short.
EXACT_SUBSET_MAX = 20_000


def exact_search(
    vectors: NDArray[np.float32],
    keys: NDArray[np.int64],
    queries: NDArray[np.float32],
    k: int,
) -> Ranked:
    """Top-`k` (scores, keys) per query by inner product, best first; ties by key.

    Rows with fewer than k candidates are padded with score -inf and key -1, as FAISS
    pads its results.
    """
    nq = len(queries)
    scores_out = np.full((nq, k), -np.inf, dtype=np.float32)
    keys_out = np.full((nq, k), -1, dtype=np.int64)
    if len(keys) == 0 or nq == 0:
        return scores_out, keys_out
    scores = queries @ vectors.T
    take = min(k, len(keys))
    for row in range(nq):
        # Sort by (-score, key) so equal scores come back in a reproducible order.
        part = np.argpartition(-scores[row], take - 1)[:take] if take < len(keys) else None
        candidates = np.arange(len(keys)) if part is None else part
        order = np.lexsort((keys[candidates], -scores[row, candidates]))[:take]
        chosen = candidates[order]
        scores_out[row, :take] = scores[row, chosen]
        keys_out[row, :take] = keys[chosen]
    return scores_out, keys_out


def exact_subset_limit(count: int, limit: int = EXACT_SUBSET_MAX) -> int:
    """Largest admissible subset searched exactly instead of through the approximate index."""
    return min(count, limit)
