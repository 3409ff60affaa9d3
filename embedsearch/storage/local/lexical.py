"""Lexical postings: BM25 over words and over adjacent word pairs, in NumPy arrays.

Words are `words.Tokenizer`'s stems. A document's score is BM25 over its words plus
0.3 x BM25 over its adjacent word pairs (after stopword removal): on the dev queries the
pairs added 0.02-0.03 MRR@10 to title and tldr queries, more than any other lexical
change measured (title boosts, field weights, BM25 variants and RM3 expansion all
measured within noise or worse).

Terms are stored as 64-bit hashes in sorted arrays, not in a vocabulary dict: loading an
index is reading a few arrays, and the millions of word pairs cost no Python objects.
Each term's rows are ascending, so a query can look a paper up in a term's postings
(`maxscore`).

Each segment of an index has its own `Postings`, never changed once written; a merge
concatenates the postings of several (linear in their size, no re-tokenising). A query is
scored by `lexical_search.LexicalSearch` over a generation's segments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...text.words import Tokenizer
from ..keys import find_keys
from .mapped import mapped_npz, write_npz
from .maxscore import Piece, length_norm, saturation

__all__ = ["LEXICAL_FILE", "PAIR_WEIGHT", "Postings", "TermPostings"]

LEXICAL_FILE = "lexical.npz"
PAIR_WEIGHT = 0.3


@dataclass
class TermPostings:
    """Term-major BM25 statistics of one kind of term (words, or word pairs) in one
    segment; never changed in place (`concat`, `keep` and `reordered` make new ones)."""

    terms: NDArray[np.uint64]  # sorted unique term hashes
    indptr: NDArray[np.int64]  # postings of terms[i] are rows/tf[indptr[i]:indptr[i+1]]
    rows: NDArray[np.int32]
    tf: NDArray[np.float32]
    lengths: NDArray[np.float32]  # terms a document has
    # Terms whose rows were found out of order (a segment merged before merges sorted
    # them): a sorted copy of their postings, made once.
    _resorted: dict[int, tuple[NDArray[np.int32], NDArray[np.float32]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    _checked: set[int] = field(default_factory=set, init=False, repr=False, compare=False)

    @classmethod
    def build(cls, docs: Sequence[NDArray[np.uint64]]) -> TermPostings:
        lengths = np.array([len(d) for d in docs], dtype=np.float32)
        if not docs or not lengths.sum():
            return cls(np.zeros(0, np.uint64), np.zeros(1, np.int64), np.zeros(0, np.int32),
                       np.zeros(0, np.float32), lengths)
        hashes = np.concatenate(docs)
        rows = np.repeat(np.arange(len(docs), dtype=np.int64), lengths.astype(np.int64))
        return cls._from_pairs(hashes, rows, np.ones(len(hashes), np.float32), lengths)

    @classmethod
    def _from_pairs(cls, hashes: NDArray[np.uint64], rows: NDArray[np.int64],
                    tf: NDArray[np.float32], lengths: NDArray[np.float32]) -> TermPostings:
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
    def concat(cls, parts: Sequence[TermPostings]) -> TermPostings:
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
        return TermPostings(terms, indptr, rows, tf, lengths.astype(np.float32))

    def keep(self, mask: NDArray[np.bool_]) -> TermPostings:
        """These postings with only the rows where `mask` holds, renumbered in order."""
        renumber = (np.cumsum(mask) - 1).astype(np.int32)
        kept = mask[self.rows]
        term_of = np.repeat(np.arange(len(self.terms)), np.diff(self.indptr))[kept]
        counts = np.bincount(term_of, minlength=len(self.terms))
        live = counts > 0
        indptr = np.concatenate([[0], np.cumsum(counts[live])]).astype(np.int64)
        return TermPostings(self.terms[live], indptr, renumber[self.rows[kept]], self.tf[kept],
                         self.lengths[mask])

    def reordered(self, order: NDArray[np.int64]) -> TermPostings:
        """These postings with row `order[i]` renumbered i, each term's rows ascending
        again (`piece` searches them); no work when `order` keeps every row in place."""
        if np.array_equal(order, np.arange(len(order))):
            return self
        position = np.empty(len(order), np.int32)
        position[order] = np.arange(len(order), dtype=np.int32)
        rows = position[self.rows]
        term_of = np.repeat(np.arange(len(self.terms), dtype=np.int32), np.diff(self.indptr))
        sort = np.lexsort((rows, term_of))
        return TermPostings(self.terms, self.indptr, rows[sort], self.tf[sort],
                         self.lengths[order])

    def live_df(self, where: NDArray[np.intp], known: NDArray[np.bool_],
                dead: NDArray[np.int64]) -> NDArray[np.int64]:
        """How many live rows each found term (`where`, `known` from `find_terms`) is in,
        the rows `dead` (ascending) not counted: found by binary search in each term's
        rows, as deleted rows are few (a merge drops them)."""
        df = np.zeros(len(where), np.int64)
        df[known] = self.indptr[where[known] + 1] - self.indptr[where[known]]
        if len(dead):
            for i in np.flatnonzero(known).tolist():
                df[i] -= np.count_nonzero(find_keys(self.ascending(int(where[i]))[0], dead)[1])
        return df

    def add_scores(self, total: NDArray[np.float32], where: NDArray[np.intp],
                   known: NDArray[np.bool_], weights: NDArray[np.float64],
                   mean_length: float) -> None:
        """Add each found term's BM25 (Lucene's, k1=1.2, b=0.75), times its weight (its
        idf times how often the query repeats it), into `total` (one entry a row)."""
        norm = length_norm(self.lengths, mean_length)
        for i in np.flatnonzero(known):
            low, high = self.indptr[where[i]], self.indptr[where[i] + 1]
            rows, tf = self.rows[low:high], self.tf[low:high]
            total[rows] += weights[i] * saturation(tf, norm[rows])

    def ascending(self, term: int) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        """The rows and counts of `terms[term]`'s postings, rows ascending."""
        low, high = int(self.indptr[term]), int(self.indptr[term + 1])
        rows, tf = self.rows[low:high], self.tf[low:high]
        if term in self._resorted:
            return self._resorted[term]
        if term not in self._checked:
            # Segments written before merges kept each term's rows ascending.
            if len(rows) > 1 and not bool(np.all(rows[1:] > rows[:-1])):
                order = np.argsort(rows, kind="stable")
                return self._resorted.setdefault(term, (rows[order], tf[order]))
            self._checked.add(term)
        return rows, tf

    def piece(self, term: int, weight: float, norm: NDArray[np.float32], start: int) -> Piece:
        """The postings of `terms[term]` as a `Piece` of a query term of `weight`, this
        segment's `length_norm` `norm`, its rows starting at `start` among the
        generation's."""
        return Piece(weight, *self.ascending(term), norm, start)

    def arrays(self, prefix: str) -> dict[str, NDArray[Any]]:
        return {f"{prefix}_{name}": getattr(self, name)
                for name in ("terms", "indptr", "rows", "tf", "lengths")}

    @classmethod
    def from_arrays(cls, data: Any, prefix: str) -> TermPostings:
        return cls(*(np.asarray(data[f"{prefix}_{name}"])
                     for name in ("terms", "indptr", "rows", "tf", "lengths")))


class Postings:
    """One segment's BM25 postings over words and word pairs, rows keyed like its vectors
    (keys ascending). Written once; a merge makes a new one (`merged`)."""

    def __init__(self, words: TermPostings, pairs: TermPostings, keys: NDArray[np.int64]) -> None:
        self._words, self._pairs, self._keys = words, pairs, keys

    @classmethod
    def build(cls, keys: NDArray[np.int64], texts: Sequence[str],
              tokenizer: Tokenizer | None = None) -> Postings:
        """The postings of `texts`, row i keyed `keys[i]` (ascending)."""
        tokenizer = tokenizer or Tokenizer()
        terms = [tokenizer.terms(text) for text in texts]
        return cls(TermPostings.build([words for words, _ in terms]),
                   TermPostings.build([pairs for _, pairs in terms]),
                   np.asarray(keys, dtype=np.int64))

    @classmethod
    def merged(cls, parts: Sequence[tuple[Postings, NDArray[np.bool_] | None]]
               ) -> Postings:
        """One index of the live rows (mask None: all) of `parts`, in key order."""
        kept = [(index._words, index._pairs, index._keys) if live is None else
                (index._words.keep(live), index._pairs.keep(live), index._keys[live])
                for index, live in parts]
        # Parts whose keys do not interleave, concatenated by first key, are in key order
        # already: each term's rows stay ascending without a sort.
        kept.sort(key=lambda part: int(part[2][0]) if len(part[2]) else 0)
        keys = np.concatenate([k for _, _, k in kept]) if kept else np.zeros(0, np.int64)
        order = np.argsort(keys, kind="stable")
        words = TermPostings.concat([w for w, _, _ in kept]).reordered(order)
        pairs = TermPostings.concat([p for _, p, _ in kept]).reordered(order)
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
        return cls(TermPostings.from_arrays(data, "words"),
                   TermPostings.from_arrays(data, "pairs"), data["keys"])

    def postings(self, kind: str) -> TermPostings:
        """The postings of words (`kind` "words") or of word pairs ("pairs")."""
        return self._words if kind == "words" else self._pairs
