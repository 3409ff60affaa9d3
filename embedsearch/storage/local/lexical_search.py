"""BM25 over the segments of one generation: the query side of `lexical.Postings`.

Document frequencies, the paper count and the mean length are summed over every
segment's live (not deleted) papers, so a paper's score does not depend on which segment
holds it and equals its score in one fresh build of the same papers. The best papers of
a query are found without scoring every posting (`maxscore`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ...text.words import Tokenized, find_terms, lucene_idf
from ..keys import find_keys
from .lexical import PAIR_WEIGHT, Postings
from .maxscore import Piece, best_rows, length_norm, postings_budget, scores_of, within_budget

__all__ = ["LexicalSearch"]


class LexicalSearch(Tokenized):
    """BM25 over the segments of one generation, each with its deleted rows masked out;
    statistics are those of the live papers of all segments together. Rows are the
    segments' rows one segment after another (`scores` has one entry a row)."""

    def __init__(self, segments: Sequence[tuple[Postings, NDArray[np.bool_] | None]]
                 ) -> None:
        self._parts = list(segments)
        self._keys = (np.concatenate([index.keys() for index, _ in self._parts])
                      if self._parts else np.zeros(0, np.int64))
        self._starts = np.cumsum([0] + [len(index) for index, _ in self._parts])
        masks = [np.ones(len(index), bool) if live is None else live
                 for index, live in self._parts]
        self._live = np.concatenate(masks) if masks else np.zeros(0, bool)
        self._dead = [np.flatnonzero(~mask) for mask in masks]
        self._count = int(self._live.sum())
        self._mean: dict[str, float] = {}
        self._norm: dict[str, list[NDArray[np.float32]]] = {}
        self._other: LexicalSearch | None = None
        self._prepared: tuple[tuple[str, float, int], Sequence[Sequence[Piece]]] | None = None
        self._last: dict[str, tuple[NDArray[np.uint64], NDArray[np.int64],
                                    list[tuple[NDArray[np.intp], NDArray[np.bool_]]]]] = {}

    def __len__(self) -> int:
        return self._count

    def _mean_length(self, kind: str) -> float:
        """The mean length of the live papers in terms of `kind`, over every segment."""
        if kind not in self._mean:
            total = sum(float(index.postings(kind).lengths[live if live is not None else
                                                          slice(None)].sum(dtype=np.float64))
                        for index, live in self._parts)
            self._mean[kind] = max(total / max(self._count, 1), 1e-9)
        return self._mean[kind]

    def _norms(self, kind: str) -> list[NDArray[np.float32]]:
        """Each segment's `length_norm` in terms of `kind`, worked out at its first query."""
        if kind not in self._norm:
            mean = self._mean_length(kind)
            self._norm[kind] = [length_norm(index.postings(kind).lengths, mean)
                                for index, _ in self._parts]
        return self._norm[kind]

    def share_statistics(self, other: LexicalSearch) -> None:
        """Score with document frequencies and counts summed with `other`'s (both ways):
        a paper's passages and abstracts are ranked against each other, so a word is as
        rare for one as for the other."""
        self._other, other._other = other, self

    def _own(self, kind: str, terms: NDArray[np.uint64]
             ) -> tuple[NDArray[np.int64], list[tuple[NDArray[np.intp], NDArray[np.bool_]]]]:
        """How many live rows of this search hold each of `terms` (unique), and where
        each segment holds them. The last answer of each kind is kept: a query's terms
        are looked up here once, though the search sharing statistics asks for them too."""
        held = self._last.get(kind)
        if held is not None and np.array_equal(held[0], terms):
            return held[1], held[2]
        found = [find_terms(index.postings(kind).terms, terms) for index, _ in self._parts]
        df = np.zeros(len(terms), np.int64)
        for (index, _), (where, known), dead in zip(self._parts, found, self._dead):
            df += index.postings(kind).live_df(where, known, dead)
        self._last[kind] = (terms, df, found)
        return df, found

    def _idf(self, kind: str, terms: NDArray[np.uint64]
             ) -> tuple[NDArray[np.float64], list[tuple[NDArray[np.intp], NDArray[np.bool_]]]]:
        """Lucene's BM25 idf of each of `terms` (unique) among the live papers (and the
        live rows of the search it shares statistics with), and where each segment holds
        them."""
        df, found = self._own(kind, terms)
        count = self._count
        if self._other is not None:
            df = df + self._other._own(kind, terms)[0]
            count += self._other._count
        return lucene_idf(count, df), found

    def _bm25(self, kind: str, query: NDArray[np.uint64]) -> NDArray[np.float32]:
        total = np.zeros(len(self._keys), dtype=np.float32)
        if not self._count or not len(query) or not len(self._keys):
            return total
        unique, repeats = np.unique(query, return_counts=True)
        idf, found = self._idf(kind, unique)
        mean = self._mean_length(kind)
        for (index, _), (where, known), start, stop in zip(
                self._parts, found, self._starts[:-1], self._starts[1:]):
            index.postings(kind).add_scores(total[start:stop], where, known, repeats * idf,
                                            mean)
        return total

    def scores(self, query: str, *, pair_weight: float = PAIR_WEIGHT) -> NDArray[np.float32]:
        """Lexical score of every row for `query` (0 where nothing matches, and for deleted
        rows): BM25 over words plus `pair_weight` times BM25 over adjacent word pairs (0:
        words alone)."""
        words, pairs = self.tokenizer.terms(query)
        total = self._bm25("words", words)
        if pair_weight:
            total += pair_weight * self._bm25("pairs", pairs)
        total[~self._live] = 0.0
        return total

    def _terms(self, query: str, pair_weight: float, budget: int
               ) -> Sequence[Sequence[Piece]]:
        """The query's terms, each as its pieces (one a segment holding it), weighted by
        idf, repeats and kind, those of most weight within `budget` postings
        (`maxscore.within_budget`); the last query's are kept, as its hits are scored
        again."""
        asked = (query, pair_weight, budget)
        prepared = self._prepared  # read once: a server's threads share this search
        if prepared is not None and prepared[0] == asked:
            return prepared[1]
        words, pairs = self.tokenizer.terms(query)
        terms: list[list[Piece]] = []
        for kind, scale, hashes in (("words", 1.0, words), ("pairs", pair_weight, pairs)):
            if not scale or not len(hashes) or not self._count:
                continue
            unique, repeats = np.unique(hashes, return_counts=True)
            idf, found = self._idf(kind, unique)
            weights = (scale * repeats * idf).tolist()
            pieces: list[list[Piece]] = [[] for _ in unique]
            for (index, _), (where, known), start, norm in zip(
                    self._parts, found, self._starts.tolist(), self._norms(kind)):
                postings = index.postings(kind)
                for i in np.flatnonzero(known).tolist():
                    pieces[i].append(postings.piece(int(where[i]), weights[i], norm, start))
            terms.extend(term for term in pieces if term)
        kept = within_budget(terms, budget)
        self._prepared = (asked, kept)
        return kept

    def best(self, query: str, depth: int, admitted: NDArray[np.bool_] | None = None,
             exclude: NDArray[np.int64] | None = None, *, pair_weight: float = PAIR_WEIGHT,
             budget: int | None = None, long_term: int | None = None
             ) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """The best `depth` (scores, keys) for `query` with a positive score, best first
        (ties by key), among the rows `admitted` (`mask`; None: the live ones) less the
        keys `exclude`: as `top` of `scores` ranks them, without scoring every posting
        (`maxscore.best_rows`, its `long` being `long_term`), and of a query holding
        more than `budget` postings (None: `maxscore.postings_budget()`), its terms of
        most weight within it."""
        allowed = self._live if admitted is None else admitted & self._live
        if exclude is not None and len(exclude):
            allowed = allowed & ~self.mask(exclude)
        terms = self._terms(query, pair_weight, postings_budget() if budget is None else budget)
        rows, scores = best_rows(terms, len(self._keys), depth, allowed, long_term)
        positive = scores > 0
        rows, scores = rows[positive], scores[positive]
        order = np.lexsort((self._keys[rows], -scores))[:depth]
        return scores[order], self._keys[rows[order]]

    def scores_at(self, query: str, keys: NDArray[np.int64], *,
                  pair_weight: float = PAIR_WEIGHT, budget: int | None = None
                  ) -> NDArray[np.float32]:
        """The score of each of `keys` for `query` as `best` scores it (0 for a deleted
        paper), looked up in each term's postings rather than scoring them all."""
        rows = self.rows(keys)
        terms = self._terms(query, pair_weight, postings_budget() if budget is None else budget)
        found = scores_of(terms, rows)
        found[~self._live[rows]] = 0.0
        return found

    def mask(self, keys: NDArray[np.int64]) -> NDArray[np.bool_]:
        """True at the row of each of `keys` the segments hold."""
        rows, held = self._located(keys)
        mask = np.zeros(len(self._keys), bool)
        mask[rows[held]] = True
        return mask

    def idf(self, words: Sequence[str]) -> dict[str, float]:
        """BM25 idf of each (stemmed) word, as the index weighs it."""
        hashes = self.tokenizer.hashes(words)
        unique = np.unique(hashes)
        values = self._idf("words", unique)[0][np.searchsorted(unique, hashes)]
        return dict(zip(words, (float(v) for v in values)))

    def rows(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """The row of each of `keys`, which the segments must hold."""
        return self._located(keys)[0]

    def _located(self, keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """The row of each of `keys` (0 where none holds it), and whether one does."""
        rows, held = np.zeros(len(keys), np.int64), np.zeros(len(keys), bool)
        for (index, _), start in zip(self._parts, self._starts[:-1]):
            at, hit = find_keys(index.keys(), keys)
            rows[hit], held[hit] = start + at[hit], True
        return rows, held

    def top(self, scores: NDArray[np.float32], k: int, allowed: NDArray[np.int64] | None = None,
            exclude: NDArray[np.int64] | None = None) -> tuple[NDArray[np.float32],
                                                             NDArray[np.int64]]:
        """The best `k` (scores, keys) of a `scores` array with a positive score, best first
        (ties by key), within `allowed` keys and outside `exclude`d ones."""
        scores = scores.copy()
        if allowed is not None:
            scores[~np.isin(self._keys, allowed)] = 0.0
        if exclude is not None and len(exclude):
            scores[np.isin(self._keys, exclude)] = 0.0
        positive = np.flatnonzero(scores > 0)
        if len(positive) > k:
            positive = positive[np.argpartition(-scores[positive], k - 1)[:k]]
        order = positive[np.lexsort((self._keys[positive], -scores[positive]))]
        return scores[order], self._keys[order]

