"""A paper ranked by its best evidence: its abstract or one of its passages.

For a paper read in full, each side of a search (dense, lexical) scores it by the best
of its abstract and its passages, on that side's own scale (a cosine, a BM25 score with
the statistics of abstracts and passages together), so a paper still appears once in a
list and an index of abstracts alone ranks exactly as before. A hit then names the
passage that won (`PassageEvidence.winners`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..storage import PassageRanked, Ranked

__all__ = ["PassageEvidence", "best_of"]


def best_of(papers: Ranked, passages: PassageRanked, depth: int) -> Ranked:
    """One ranking of the `depth` best papers, each scored by the higher of its score in
    `papers` and its best passage's in `passages` (ties by key)."""
    scores, keys, _ = passages
    if not len(keys):
        return papers
    every = np.concatenate([papers[1], keys])
    values = np.concatenate([papers[0], scores]).astype(np.float32)
    order = np.lexsort((every, -values))
    _, first = np.unique(every[order], return_index=True)
    chosen = order[np.sort(first)[:depth]]
    return values[chosen], every[chosen]


@dataclass(frozen=True)
class PassageEvidence:
    """The best passage of each paper on each side of one search, as the storage ranked
    them (None: that side was not searched)."""

    dense: PassageRanked | None = None
    lexical: PassageRanked | None = None

    @staticmethod
    def _best(ranked: PassageRanked | None) -> dict[int, tuple[float, int]]:
        if ranked is None:
            return {}
        return {int(paper): (float(score), int(key))
                for score, paper, key in zip(*ranked)}

    def best_cosines(self, keys: NDArray[np.int64], cosines: NDArray[np.float32]
                     ) -> NDArray[np.float32]:
        """Each paper's cosine to the query raised to its best passage's, where the
        dense side found one that beats its abstract."""
        dense = self._best(self.dense)
        return np.array([max(float(value), dense.get(key, (-1.0, 0))[0])
                         for key, value in zip(keys.tolist(), cosines.tolist())], np.float32)

    def winners(self, keys: NDArray[np.int64], cosines: NDArray[np.float32] | None,
                bm25: NDArray[np.float32] | None
                ) -> tuple[list[int | None], NDArray[np.float32] | None,
                           NDArray[np.float32] | None]:
        """For each paper of `keys`, the passage that beat its abstract (None: the
        abstract is its best evidence), and the papers' cosines and BM25 scores raised
        to their best passages'. Where both sides' best passages beat the abstract, the
        lexical one is named: a passage sharing the query's words is the one a reader
        can check against the query, and a pasted sentence is found by its words."""
        dense, lexical = self._best(self.dense), self._best(self.lexical)
        chosen: list[int | None] = []
        cosines = None if cosines is None else cosines.copy()
        bm25 = None if bm25 is None else bm25.copy()
        for i, key in enumerate(keys.tolist()):
            won: int | None = None
            if key in dense and cosines is not None and dense[key][0] > cosines[i]:
                cosines[i], won = dense[key][0], dense[key][1]
            # >=: the lexical ranking's scores are already the best of the two sides.
            if key in lexical and (bm25 is None or lexical[key][0] >= bm25[i]):
                if bm25 is not None:
                    bm25[i] = lexical[key][0]
                won = lexical[key][1]
            chosen.append(won)
        return chosen, cosines, bm25
