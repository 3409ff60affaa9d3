"""Combining rankings: lexical with dense (hybrid search), and diversity re-ranking.

Hybrid fusion is a weighted sum of z-scored scores, chosen on the dev queries (even
query ids; held out: odd ids) against reciprocal rank fusion and min-max combination:
each list's top 50 are z-normalised over themselves, a paper missing from one list
takes that list's lowest normalised score, and lexical hits scoring 0 are dropped.
Weight 0.6 on the lexical side. On dev, RRF (k=60) was worst on title and tldr
queries; min-max 50/50 was 0.002-0.027 MRR@10 below this; weights 0.5-0.6 and depths
50-100 were all within 0.005 of the best; a weight by query length did not help.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["FUSION_DEPTH", "LEXICAL_WEIGHT", "cosine_scale", "fuse", "mmr"]

LEXICAL_WEIGHT = 0.6
FUSION_DEPTH = 50
#: Maximal marginal relevance: weight of relevance against novelty. At 0.5 a near-copy of
#: a paper already shown (cosine ~0.99) loses to any candidate less than ~0.5 less
#: relevant; at 0.7, as often used, two copies of one abstract still filled a page.
MMR_LAMBDA = 0.5
_NEAR_ONE = 1 - 1e-6  # artanh(1) is infinite: a paper and its own copy

Ranked = tuple[NDArray[np.float32], NDArray[np.int64]]


def _z(scores: NDArray[np.float32]) -> NDArray[np.float64]:
    if len(scores) == 0:
        return np.zeros(0)
    spread = float(scores.std())
    centred = scores.astype(np.float64) - float(scores.mean())
    return centred / spread if spread > 0 else np.zeros(len(scores))


def fuse(lexical: Ranked, dense: Ranked, weight: float = LEXICAL_WEIGHT) -> Ranked:
    """One ranking from a lexical and a dense one (each best first): see module doc."""
    lex_scores, lex_keys = lexical
    keep = lex_scores > 0
    lex_scores, lex_keys = lex_scores[keep], lex_keys[keep]
    dense_scores, dense_keys = dense
    valid = dense_keys >= 0
    dense_scores, dense_keys = dense_scores[valid], dense_keys[valid]
    keys, where = np.unique(np.concatenate([lex_keys, dense_keys]), return_inverse=True)
    if len(keys) == 0:
        return np.zeros(0, np.float32), np.zeros(0, np.int64)
    parts = []
    for scores, positions in ((lex_scores, where[: len(lex_keys)]),
                              (dense_scores, where[len(lex_keys):])):
        normal = _z(scores)
        column = np.full(len(keys), normal.min() if len(normal) else 0.0)
        column[positions] = normal
        parts.append(column)
    fused = weight * parts[0] + (1 - weight) * parts[1]
    order = np.lexsort((keys, -fused))
    return fused[order].astype(np.float32), keys[order]


def cosine_scale(ranking: NDArray[np.floating], cosines: NDArray[np.floating]
                 ) -> NDArray[np.float32]:
    """A ranking's scores (BM25, a fused z-score) put on the cosine scale of the same
    candidates: z-scored over them, then given their cosines' mean and spread (moment
    matching), in Fisher's z (artanh) so the result stays within (-1, 1).

    The map is increasing, so the order is the ranking's; a candidate ranked as high as
    the pool's best cosine scores about that cosine, and one ranked above it by strong
    shared words scores above its own cosine. A pool of one keeps its cosine. Matched
    on the cosines themselves, a title query's exact match (a fused z of 10 among 90
    candidates) scored 1.14 on the dev queries; in artanh it nears 1 without passing."""
    if len(ranking) == 0:
        return np.zeros(0, np.float32)
    fisher = np.arctanh(np.clip(np.asarray(cosines, np.float64), -_NEAR_ONE, _NEAR_ONE))
    mean, spread = float(np.mean(fisher)), float(np.std(fisher))
    return np.tanh(mean + spread * _z(np.asarray(ranking, np.float32))).astype(np.float32)


def mmr(relevance: NDArray[np.floating], vectors: NDArray[np.float32], k: int,
        lam: float = MMR_LAMBDA) -> NDArray[np.int64]:
    """Positions of `k` candidates chosen by maximal marginal relevance.

    Each pick maximises lam * relevance - (1 - lam) * (cosine to the closest pick so
    far); `relevance` should be on the cosine scale (the query-paper cosine), so that
    the two terms weigh alike.
    """
    if len(relevance) == 0:
        return np.zeros(0, np.int64)
    similarity = vectors @ vectors.T
    chosen = [int(np.argmax(relevance))]
    closest = similarity[chosen[0]].copy()
    while len(chosen) < min(k, len(relevance)):
        value = lam * relevance - (1 - lam) * closest
        value[chosen] = -np.inf
        best = int(np.argmax(value))
        chosen.append(best)
        closest = np.maximum(closest, similarity[best])
    return np.array(chosen, dtype=np.int64)
