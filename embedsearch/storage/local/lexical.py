"""Lexical ranking: BM25 over words and over adjacent word pairs, in NumPy arrays.

Words are `words.Tokenizer`'s stems. A document's score is BM25 over its words plus
0.3 x BM25 over its adjacent word pairs (after stopword removal): on the dev queries the
pairs added 0.02-0.03 MRR@10 to title and tldr queries, more than any other lexical
change measured (title boosts, field weights, BM25 variants and RM3 expansion all
measured within noise or worse).

Terms are stored as 64-bit hashes in sorted arrays, not in a vocabulary dict: loading an
index is reading a few arrays, and the millions of word pairs cost no Python objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...words import Tokenized, bm25_idf

__all__ = ["LEXICAL_FILE", "LexicalIndex"]

LEXICAL_FILE = "lexical.npz"
K1, B = 1.2, 0.75
PAIR_WEIGHT = 0.3


@dataclass
class _Postings:
    """Term-major BM25 statistics of one kind of term (words, or word pairs)."""

    terms: NDArray[np.uint64]  # sorted unique term hashes
    indptr: NDArray[np.int64]  # postings of terms[i] are rows/tf[indptr[i]:indptr[i+1]]
    rows: NDArray[np.int32]
    tf: NDArray[np.float32]
    lengths: NDArray[np.float32]  # terms a document has

    @classmethod
    def build(cls, docs: Sequence[NDArray[np.uint64]]) -> _Postings:
        lengths = np.array([len(d) for d in docs], dtype=np.float32)
        if not docs or not lengths.sum():
            return cls(np.zeros(0, np.uint64), np.zeros(1, np.int64), np.zeros(0, np.int32),
                       np.zeros(0, np.float32), lengths)
        hashes = np.concatenate(docs)
        rows = np.repeat(np.arange(len(docs), dtype=np.int64), lengths.astype(np.int64))
        return cls._from_pairs(hashes, rows, np.ones(len(hashes), np.float32), lengths)

    @classmethod
    def _from_pairs(cls, hashes: NDArray[np.uint64], rows: NDArray[np.int64],
                    tf: NDArray[np.float32], lengths: NDArray[np.float32]) -> _Postings:
        """Postings from (term, row, count) triples; repeated (term, row) are summed."""
        order = np.lexsort((rows, hashes))
        hashes, rows, tf = hashes[order], rows[order], tf[order]
        new = np.ones(len(hashes), dtype=bool)
        new[1:] = (hashes[1:] != hashes[:-1]) | (rows[1:] != rows[:-1])
        starts = np.flatnonzero(new)
        tf = np.add.reduceat(tf, starts).astype(np.float32)
        hashes, rows = hashes[starts], rows[starts]
        first = np.ones(len(hashes), dtype=bool)
        first[1:] = hashes[1:] != hashes[:-1]
        term_starts = np.flatnonzero(first)
        indptr = np.append(term_starts, len(hashes)).astype(np.int64)
        return cls(hashes[term_starts], indptr, rows.astype(np.int32), tf, lengths)

    def extend(self, docs: Sequence[NDArray[np.uint64]]) -> _Postings:
        """These postings plus `docs` as new rows after the existing ones.

        New rows sort after every old one, so each term's merged postings are its old
        block followed by its new block: a merge in linear time, no re-sort.
        """
        new = _Postings.build(docs)
        terms = np.union1d(self.terms, new.terms)
        old_at, new_at = np.searchsorted(terms, self.terms), np.searchsorted(terms, new.terms)
        old_counts, new_counts = np.diff(self.indptr), np.diff(new.indptr)
        before = np.zeros(len(terms), np.int64)
        before[old_at] = old_counts
        counts = before.copy()
        counts[new_at] += new_counts
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        old_to = np.arange(len(self.rows)) + np.repeat(indptr[old_at] - self.indptr[:-1],
                                                       old_counts)
        new_to = np.arange(len(new.rows)) + np.repeat(
            indptr[new_at] + before[new_at] - new.indptr[:-1], new_counts)
        rows = np.empty(indptr[-1], np.int32)
        tf = np.empty(indptr[-1], np.float32)
        rows[old_to], tf[old_to] = self.rows, self.tf
        rows[new_to], tf[new_to] = new.rows + len(self.lengths), new.tf
        return _Postings(terms, indptr, rows, tf, np.concatenate([self.lengths, new.lengths]))

    def keep(self, mask: NDArray[np.bool_]) -> _Postings:
        """These postings with only the rows where `mask` holds, renumbered in order."""
        renumber = (np.cumsum(mask) - 1).astype(np.int32)
        kept = mask[self.rows]
        term_of = np.repeat(np.arange(len(self.terms)), np.diff(self.indptr))[kept]
        counts = np.bincount(term_of, minlength=len(self.terms))
        live = counts > 0
        indptr = np.concatenate([[0], np.cumsum(counts[live])]).astype(np.int64)
        return _Postings(self.terms[live], indptr, renumber[self.rows[kept]], self.tf[kept],
                         self.lengths[mask])

    def idf(self, terms: NDArray[np.uint64]) -> NDArray[np.float64]:
        """Lucene's BM25 idf of each term; unknown terms get that of a term seen nowhere."""
        return bm25_idf(len(self.lengths), self.terms, self.df, terms)

    @cached_property
    def df(self) -> NDArray[np.int64]:
        """How many rows each of `terms` occurs in (postings are never changed in place:
        `extend` and `keep` make new ones)."""
        return self.indptr[1:] - self.indptr[:-1]

    def scores(self, query: NDArray[np.uint64]) -> NDArray[np.float32]:
        """BM25 (Lucene's idf, k1=1.2, b=0.75) of every row for the query terms."""
        total = np.zeros(len(self.lengths), dtype=np.float32)
        if not len(self.terms) or not len(query):
            return total
        norm = K1 * (1 - B + B * self.lengths / max(float(self.lengths.mean()), 1e-9))
        unique, repeats = np.unique(query, return_counts=True)
        where = np.searchsorted(self.terms, unique).clip(0, len(self.terms) - 1)
        for term, position, times, idf in zip(unique, where, repeats, self.idf(unique)):
            if self.terms[position] != term:
                continue
            low, high = self.indptr[position], self.indptr[position + 1]
            rows, tf = self.rows[low:high], self.tf[low:high]
            total[rows] += times * idf * tf / (tf + norm[rows])
        return total

    def arrays(self, prefix: str) -> dict[str, NDArray[Any]]:
        return {f"{prefix}_{name}": getattr(self, name)
                for name in ("terms", "indptr", "rows", "tf", "lengths")}

    @classmethod
    def from_arrays(cls, data: Any, prefix: str) -> _Postings:
        return cls(*(np.asarray(data[f"{prefix}_{name}"])
                     for name in ("terms", "indptr", "rows", "tf", "lengths")))


class LexicalIndex(Tokenized):
    """BM25 over words and word pairs of each paper's lexical text, rows keyed like vectors."""

    def __init__(self, words: _Postings, pairs: _Postings, keys: NDArray[np.int64]) -> None:
        self._words, self._pairs, self._keys = words, pairs, keys

    @classmethod
    def build(cls, keys: NDArray[np.int64], texts: Sequence[str]) -> LexicalIndex:
        index = cls(_Postings.build([]), _Postings.build([]), np.zeros(0, np.int64))
        index.add(keys, texts)
        return index

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> NDArray[np.int64]:
        return self._keys

    def add(self, keys: NDArray[np.int64], texts: Sequence[str]) -> None:
        terms = [self.tokenizer.terms(text) for text in texts]
        self._words = self._words.extend([words for words, _ in terms])
        self._pairs = self._pairs.extend([pairs for _, pairs in terms])
        self._keys = np.concatenate([self._keys, np.asarray(keys, dtype=np.int64)])

    def remove(self, keys: NDArray[np.int64]) -> None:
        mask = ~np.isin(self._keys, keys)
        self._words, self._pairs = self._words.keep(mask), self._pairs.keep(mask)
        self._keys = self._keys[mask]

    def idf(self, words: Sequence[str]) -> dict[str, float]:
        """BM25 idf of each (stemmed) word, as the index weighs it."""
        values = self._words.idf(self.tokenizer.hashes(words))
        return dict(zip(words, (float(v) for v in values)))

    def scores(self, query: str, *, pair_weight: float = PAIR_WEIGHT) -> NDArray[np.float32]:
        """Lexical score of every row for `query` (0 where nothing matches): BM25 over
        words plus `pair_weight` times BM25 over adjacent word pairs (0: words alone)."""
        words, pairs = self.tokenizer.terms(query)
        if not pair_weight:
            return self._words.scores(words)
        return self._words.scores(words) + pair_weight * self._pairs.scores(pairs)

    def rows(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """Row of each key (keys are stored ascending, as keys are handed out)."""
        return np.searchsorted(self._keys, keys)

    def top(self, scores: NDArray[np.float32], k: int, allowed: NDArray[np.int64] | None = None,
            exclude: NDArray[np.int64] | None = None) -> tuple[NDArray[np.float32],
                                                             NDArray[np.int64]]:
        """The best `k` (scores, keys) of a `scores` array with a positive score, best first,
        within `allowed` keys and outside `exclude`d ones."""
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


    def save(self, directory: Path) -> list[str]:
        arrays = {"keys": self._keys, **self._words.arrays("words"),
                  **self._pairs.arrays("pairs")}
        np.savez(directory / LEXICAL_FILE, **arrays)  # type: ignore[arg-type]
        return [LEXICAL_FILE]

    @classmethod
    def load(cls, directory: Path) -> LexicalIndex:
        with np.load(directory / LEXICAL_FILE, allow_pickle=False) as data:
            return cls(_Postings.from_arrays(data, "words"), _Postings.from_arrays(data, "pairs"),
                       np.asarray(data["keys"]))
