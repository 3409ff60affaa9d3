"""Ranking quality metrics at a cutoff, with binary relevance.

Each takes the ranked ids a system returned and the set of relevant ids, and scores one
query; average them over queries. The definitions are the usual IR ones (nDCG with
log2 discounts and the ideal ranking of min(k, |relevant|) relevant hits).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

__all__ = ["METRICS", "mrr", "ndcg", "precision", "recall"]


def mrr(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """1/rank of the first relevant hit within the top k, else 0."""
    for rank, paper_id in enumerate(ranked[:k], 1):
        if paper_id in relevant:
            return 1.0 / rank
    return 0.0


def recall(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """Share of the relevant papers found in the top k."""
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def precision(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """Share of the top k that is relevant (k in the denominator even if fewer came back)."""
    return len(set(ranked[:k]) & set(relevant)) / k


def ndcg(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """Discounted cumulative gain of the top k over that of an ideal ranking."""
    gain = sum(1.0 / math.log2(rank + 1)
               for rank, paper_id in enumerate(ranked[:k], 1) if paper_id in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(relevant)) + 1))
    return gain / ideal if ideal else 0.0


METRICS = {"MRR@10": mrr, "Recall@10": recall, "nDCG@10": ndcg, "P@10": precision}
