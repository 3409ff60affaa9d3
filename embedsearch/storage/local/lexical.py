"""Lexical ranking: BM25 over words and over adjacent word pairs, in NumPy arrays.

Words are `words.Tokenizer`'s stems. A document's score is BM25 over its words plus
0.3 x BM25 over its adjacent word pairs (after stopword removal): on the dev queries the
pairs added 0.02-0.03 MRR@10 to title and tldr queries, more than any other lexical
change measured (title boosts, field weights, BM25 variants and RM3 expansion all
measured within noise or worse).

Terms are stored as 64-bit hashes in sorted arrays, not in a vocabulary dict: loading an
index is reading a few arrays, and the millions of word pairs cost no Python objects.

Each segment of an index has its own `Postings`, never changed once written; a merge
concatenates the postings of several (linear in their size, no re-tokenising). What a
query is scored with is `LexicalSearch` over a generation's segments: document
frequencies, the paper count and the mean length are summed over every segment's live
(not deleted) papers, so a paper's score does not depend on which segment holds it and
equals its score in one fresh build of the same papers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...text.words import Tokenized, Tokenizer, find_terms, lucene_idf
from .mapped import mapped_npz, write_npz

__all__ = ["LEXICAL_FILE", "PAIR_WEIGHT", "Postings", "LexicalSearch"]

LEXICAL_FILE = "lexical.npz"
K1, B = 1.2, 0.75
PAIR_WEIGHT = 0.3


@dataclass
class _TermPostings:
    """Term-major BM25 statistics of one kind of term (words, or word pairs) in one
    segment; never changed in place (`concat`, `keep` and `reordered` make new ones)."""

    terms: NDArray[np.uint64]  # sorted unique term hashes
    indptr: NDArray[np.int64]  # postings of terms[i] are rows/tf[indptr[i]:indptr[i+1]]
    rows: NDArray[np.int32]
    tf: NDArray[np.float32]
    lengths: NDArray[np.float32]  # terms a document has

    @classmethod
    def build(cls, docs: Sequence[NDArray[np.uint64]]) -> _TermPostings:
        lengths = np.array([len(d) for d in docs], dtype=np.float32)
        if not docs or not lengths.sum():
            return cls(np.zeros(0, np.uint64), np.zeros(1, np.int64), np.zeros(0, np.int32),
                       np.zeros(0, np.float32), lengths)
        hashes = np.concatenate(docs)
        rows = np.repeat(np.arange(len(docs), dtype=np.int64), lengths.astype(np.int64))
        return cls._from_pairs(hashes, rows, np.ones(len(hashes), np.float32), lengths)

    @classmethod
    def _from_pairs(cls, hashes: NDArray[np.uint64], rows: NDArray[np.int64],
                    tf: NDArray[np.float32], lengths: NDArray[np.float32]) -> _TermPostings:
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

    @classmethod
    def concat(cls, parts: Sequence[_TermPostings]) -> _TermPostings:
        """The postings of `parts` as one, the rows of each after those of the ones before.

        Each term's postings are its blocks from each part in turn, so every posting is
        moved once to a place computed from the counts: linear time, no sort.
        """
        terms = np.unique(np.concatenate([p.terms for p in parts])) if parts else \
            np.zeros(0, np.uint64)
        counts = np.zeros(len(terms), np.int64)
        places = [np.searchsorted(terms, p.terms) for p in parts]
        for part, at in zip(parts, places):
            counts[at] += np.diff(part.indptr)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        cursor = indptr[:-1].copy()
        rows = np.empty(indptr[-1], np.int32)
        tf = np.empty(indptr[-1], np.float32)
        offset = 0
        for part, at in zip(parts, places):
            sizes = np.diff(part.indptr)
            to = np.arange(len(part.rows)) + np.repeat(cursor[at] - part.indptr[:-1], sizes)
            rows[to], tf[to] = part.rows + offset, part.tf
            cursor[at] += sizes
            offset += len(part.lengths)
        lengths = np.concatenate([p.lengths for p in parts]) if parts else \
            np.zeros(0, np.float32)
        return _TermPostings(terms, indptr, rows, tf, lengths.astype(np.float32))

    def keep(self, mask: NDArray[np.bool_]) -> _TermPostings:
        """These postings with only the rows where `mask` holds, renumbered in order."""
        renumber = (np.cumsum(mask) - 1).astype(np.int32)
        kept = mask[self.rows]
        term_of = np.repeat(np.arange(len(self.terms)), np.diff(self.indptr))[kept]
        counts = np.bincount(term_of, minlength=len(self.terms))
        live = counts > 0
        indptr = np.concatenate([[0], np.cumsum(counts[live])]).astype(np.int64)
        return _TermPostings(self.terms[live], indptr, renumber[self.rows[kept]], self.tf[kept],
                         self.lengths[mask])

    def reordered(self, order: NDArray[np.int64]) -> _TermPostings:
        """These postings with row `order[i]` renumbered i (rows within a term need no
        order: scoring adds into rows wherever they are)."""
        position = np.empty(len(order), np.int32)
        position[order] = np.arange(len(order), dtype=np.int32)
        return _TermPostings(self.terms, self.indptr, position[self.rows], self.tf,
                         self.lengths[order])

    def live_df(self, where: NDArray[np.intp], known: NDArray[np.bool_],
                live: NDArray[np.bool_] | None) -> NDArray[np.int64]:
        """How many live rows each found term (`where`, `known` from `find_terms`) is in."""
        df = np.zeros(len(where), np.int64)
        for i in np.flatnonzero(known):
            low, high = self.indptr[where[i]], self.indptr[where[i] + 1]
            df[i] = high - low if live is None else np.count_nonzero(live[self.rows[low:high]])
        return df

    def add_scores(self, total: NDArray[np.float32], where: NDArray[np.intp],
                   known: NDArray[np.bool_], weights: NDArray[np.float64],
                   mean_length: float) -> None:
        """Add each found term's BM25 (Lucene's, k1=1.2, b=0.75), times its weight (its
        idf times how often the query repeats it), into `total` (one entry a row)."""
        norm = K1 * (1 - B + B * self.lengths / mean_length)
        for i in np.flatnonzero(known):
            low, high = self.indptr[where[i]], self.indptr[where[i] + 1]
            rows, tf = self.rows[low:high], self.tf[low:high]
            total[rows] += weights[i] * tf / (tf + norm[rows])

    def arrays(self, prefix: str) -> dict[str, NDArray[Any]]:
        return {f"{prefix}_{name}": getattr(self, name)
                for name in ("terms", "indptr", "rows", "tf", "lengths")}

    @classmethod
    def from_arrays(cls, data: Any, prefix: str) -> _TermPostings:
        return cls(*(np.asarray(data[f"{prefix}_{name}"])
                     for name in ("terms", "indptr", "rows", "tf", "lengths")))


class Postings:
    """One segment's BM25 postings over words and word pairs, rows keyed like its vectors
    (keys ascending). Written once; a merge makes a new one (`merged`)."""

    def __init__(self, words: _TermPostings, pairs: _TermPostings, keys: NDArray[np.int64]) -> None:
        self._words, self._pairs, self._keys = words, pairs, keys

    @classmethod
    def build(cls, keys: NDArray[np.int64], texts: Sequence[str],
              tokenizer: Tokenizer | None = None) -> Postings:
        """The postings of `texts`, row i keyed `keys[i]` (ascending)."""
        tokenizer = tokenizer or Tokenizer()
        terms = [tokenizer.terms(text) for text in texts]
        return cls(_TermPostings.build([words for words, _ in terms]),
                   _TermPostings.build([pairs for _, pairs in terms]),
                   np.asarray(keys, dtype=np.int64))

    @classmethod
    def merged(cls, parts: Sequence[tuple[Postings, NDArray[np.bool_] | None]]
               ) -> Postings:
        """One index of the live rows (mask None: all) of `parts`, in key order."""
        kept = [(index._words, index._pairs, index._keys) if live is None else
                (index._words.keep(live), index._pairs.keep(live), index._keys[live])
                for index, live in parts]
        keys = np.concatenate([k for _, _, k in kept]) if kept else np.zeros(0, np.int64)
        order = np.argsort(keys, kind="stable")
        words = _TermPostings.concat([w for w, _, _ in kept]).reordered(order)
        pairs = _TermPostings.concat([p for _, p, _ in kept]).reordered(order)
        return cls(words, pairs, keys[order])

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> NDArray[np.int64]:
        return self._keys

    def save(self, directory: Path) -> list[str]:
        arrays = {"keys": self._keys, **self._words.arrays("words"),
                  **self._pairs.arrays("pairs")}
        write_npz(directory / LEXICAL_FILE, arrays)
        return [LEXICAL_FILE]

    @classmethod
    def load(cls, directory: Path) -> Postings:
        """The postings saved in `directory`, memory-mapped (`mapped_npz`): opening reads
        none of them, and a query pages in only its terms' postings."""
        data = mapped_npz(directory / LEXICAL_FILE)
        return cls(_TermPostings.from_arrays(data, "words"),
                   _TermPostings.from_arrays(data, "pairs"), data["keys"])

    def postings(self, kind: str) -> _TermPostings:
        """The postings of words (`kind` "words") or of word pairs ("pairs")."""
        return self._words if kind == "words" else self._pairs


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
        self._count = int(self._live.sum())
        self._mean: dict[str, float] = {}
        self._other: LexicalSearch | None = None
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
        for (index, live), (where, known) in zip(self._parts, found):
            df += index.postings(kind).live_df(where, known, live)
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

    def idf(self, words: Sequence[str]) -> dict[str, float]:
        """BM25 idf of each (stemmed) word, as the index weighs it."""
        hashes = self.tokenizer.hashes(words)
        unique = np.unique(hashes)
        values = self._idf("words", unique)[0][np.searchsorted(unique, hashes)]
        return dict(zip(words, (float(v) for v in values)))

    def rows(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """The row of each of `keys`, which the segments must hold."""
        found = np.zeros(len(keys), np.int64)
        for (index, _), start in zip(self._parts, self._starts[:-1]):
            held = index.keys()
            if not len(held):
                continue
            at = np.searchsorted(held, keys).clip(0, len(held) - 1)
            hit = held[at] == keys
            found[hit] = start + at[hit]
        return found

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
