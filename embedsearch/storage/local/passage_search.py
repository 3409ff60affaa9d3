"""Searching the passages of a generation's segments: papers ranked by their best passage.

A query is matched against every live passage, dense (each segment's passage vectors)
and lexical (BM25 over the passages' postings, its statistics shared with the
abstracts' so that one word weighs alike in both); each paper then counts once, by its
best passage, which the answer names. Filters and exclusions are the papers': a
passage is admitted when its paper is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..base import PassageRanked
from .fulltext import FullText, owners
from .lexical_search import LexicalSearch
from .segment import Segment

__all__ = ["PASSAGE_POOL", "PassageSearch", "best_per_paper"]

#: Passages a dense search asks each segment for, per paper wanted: a paper's best
#: passages often come several together (overlapping windows of one section), so a pool
#: of depth x 4 still leaves `depth` distinct papers in nearly every query.
PASSAGE_POOL = 4


def best_per_paper(scores: NDArray[np.float32], keys: NDArray[np.int64],
                   depth: int) -> PassageRanked:
    """The best `depth` papers among scored passages, each by its best passage (ties by
    key), best first.

    Only the best passages are sorted: a lexical query's words can reach most of an
    index's passages, and sorting them all cost more than the rest of the passage
    search. The passages scoring at least the `depth x PASSAGE_POOL`-th best score are
    taken (ties included), and the pool is widened only when they hold fewer than
    `depth` papers: a paper left outside it scores below every paper inside, so the
    answer is exactly that of sorting everything."""
    if not len(keys):
        return np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64)
    pool = depth * PASSAGE_POOL
    while True:
        taken = _best_rows(scores, pool)
        order = taken[np.lexsort((keys[taken], -scores[taken]))]
        _, first = np.unique(owners(keys[order]), return_index=True)
        if len(first) >= depth or len(taken) == len(keys):
            break
        pool *= PASSAGE_POOL
    chosen = order[np.sort(first)[:depth]]
    return scores[chosen], owners(keys[chosen]), keys[chosen]


def _best_rows(scores: NDArray[np.float32], count: int) -> NDArray[np.intp]:
    """The rows of the `count` best scores, and of every score tied with the last."""
    if len(scores) <= count:
        return np.arange(len(scores))
    threshold = scores[np.argpartition(-scores, count - 1)[count - 1]]
    return np.flatnonzero(scores >= threshold)


class PassageSearch:
    """The passages of one generation's segments (those with full text), each segment's
    removed papers' passages masked out."""

    def __init__(self, segments: Sequence[Segment], deleted: Sequence[NDArray[np.int64]],
                 abstracts: LexicalSearch) -> None:
        self._parts: list[tuple[int, FullText, NDArray[np.int64]]] = [
            (at, segment.full_text, deleted[at]) for at, segment in enumerate(segments)
            if segment.full_text is not None]
        self.lexical = LexicalSearch([(text.lexical, text.live(gone))
                                      for _, text, gone in self._parts])
        self.lexical.share_statistics(abstracts)
        keys = [text.keys() for _, text, _ in self._parts]
        self._keys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
        self._scores: tuple[str, NDArray[np.float32]] | None = None

    def __bool__(self) -> bool:
        return bool(len(self._keys))

    def dense(self, vector: NDArray[np.float32], depth: int,
              allowed: list[NDArray[np.int64]] | None, exclude: NDArray[np.int64]
              ) -> PassageRanked:
        """The best `depth` papers by their nearest passage; `allowed` the papers each
        segment may answer (None: all), `exclude` papers never to answer."""
        scores, keys = [], []
        for at, text, gone in self._parts:
            held = text.keys()
            papers = owners(held)
            subset = None if allowed is None else held[np.isin(papers, allowed[at])]
            if subset is not None and not len(subset):
                continue
            barred = np.union1d(exclude, gone) if len(gone) else exclude
            skipped = held[np.isin(papers, barred)] if len(barred) else None
            found, hit = text.vectors.search(vector[None, :], depth * PASSAGE_POOL,
                                             allowed=subset, exclude=skipped)
            valid = hit[0] >= 0
            scores.append(found[0][valid])
            keys.append(hit[0][valid])
        if not keys:
            return best_per_paper(np.zeros(0, np.float32), np.zeros(0, np.int64), depth)
        return best_per_paper(np.concatenate(scores), np.concatenate(keys), depth)

    def lexical_ranked(self, text: str, depth: int, allowed: NDArray[np.int64] | None,
                       exclude: NDArray[np.int64]) -> PassageRanked:
        """The best `depth` papers by their best passage's BM25 for `text`; `allowed`
        papers only (None: all), `exclude`d ones never."""
        if self._scores is None or self._scores[0] != text:
            self._scores = (text, self.lexical.scores(text))
        scores = self._scores[1]
        positive = np.flatnonzero(scores > 0)
        papers = owners(self._keys[positive])
        keep = np.ones(len(positive), bool)
        if allowed is not None:
            keep &= np.isin(papers, allowed)
        if len(exclude):
            keep &= np.isin(papers, exclude, invert=True)
        positive = positive[keep]
        return best_per_paper(scores[positive], self._keys[positive], depth)
