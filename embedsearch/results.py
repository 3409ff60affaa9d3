"""What a query returns: ranked hits as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .papers import Paper

__all__ = ["Hit", "hit_record"]


@dataclass(frozen=True)
class Hit:
    """One result: its 1-based rank, its score (higher is closer), the paper, and why.

    `score` is the mode's ranking score: cosine similarity for dense search, BM25 for
    lexical, the fused z-score for hybrid. `dense_score` (cosine to the query vector)
    and `lexical_score` (BM25) are given whenever the search computed them;
    `evidence` is the abstract's sentence that best matches the query, and
    `evidence_terms` the words of it that match.
    """

    rank: int
    score: float
    paper: Paper
    dense_score: float | None = None
    lexical_score: float | None = None
    evidence: str | None = None
    evidence_terms: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"rank": self.rank, "score": self.score, **self.paper.to_dict()}
        if self.dense_score is not None:
            data["dense_score"] = self.dense_score
        if self.lexical_score is not None:
            data["lexical_score"] = self.lexical_score
        if self.evidence is not None:
            data["evidence"] = self.evidence
            data["evidence_terms"] = list(self.evidence_terms)
        return data


def hit_record(hit: Hit, **extra: Any) -> dict[str, Any]:
    """One hit as JSON-ready data: the shape every JSON output of a hit has."""
    data = hit.to_dict()
    data["score"] = round(hit.score, 6)
    return {**data, **extra}
