"""What a query returns: ranked hits as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .papers import Paper

__all__ = ["Hit"]


@dataclass(frozen=True)
class Hit:
    """One result: its 1-based rank, cosine similarity to the query, and the paper."""

    rank: int
    score: float
    paper: Paper

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "score": self.score, **self.paper.to_dict()}
