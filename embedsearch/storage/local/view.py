"""A view of one local generation: its vector and lexical indexes in memory and its
paper store open read-only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...filters import Filters
from ...papers import Paper, normalise_title
from ..base import Ranked, View, WordStatistics
from ..layout import IndexDirectory, Lease, Manifest
from .lexical import LexicalIndex
from .store import STORE_FILE, PaperStore
from .vectors import VectorIndex, load_index

__all__ = ["LocalView", "Parts", "load_parts"]


@dataclass
class Parts:
    """What one generation searches: the vector index and the lexical index, same keys."""

    vectors: VectorIndex
    lexical: LexicalIndex


def load_parts(directory: IndexDirectory, manifest: Manifest) -> Parts:
    """The vector and lexical indexes of `manifest`'s generation, read from disk."""
    files = directory.files_dir(manifest)
    return Parts(load_index(files, manifest.index, int(manifest.model["dim"])),
                 LexicalIndex.load(files))


class LocalView(View):
    """One generation's parts in memory and its paper store open read-only."""

    def __init__(self, manifest: Manifest, parts: Parts, store: PaperStore,
                 lease: Lease) -> None:
        self.manifest, self.parts, self.store, self.lease = manifest, parts, store, lease
        self._allowed: tuple[Filters, NDArray[np.int64]] | None = None
        self._scores: tuple[str, NDArray[np.float32]] | None = None
        self._titles: dict[str, int] | None = None

    @classmethod
    def of(cls, directory: IndexDirectory, manifest: Manifest, parts: Parts,
           lease: Lease | None = None) -> LocalView:
        """The generation `manifest` whose `parts` are already in memory, leased unless
        `lease` is given."""
        lease = lease or directory.lease(manifest)
        try:
            store = PaperStore.open(directory.files_dir(manifest) / STORE_FILE)
        except BaseException:
            lease.release()
            raise
        return cls(manifest, parts, store, lease)

    def __len__(self) -> int:
        return len(self.parts.vectors)

    def keys(self) -> NDArray[np.int64]:
        return self.parts.vectors.keys()

    def keys_of(self, ids: Iterable[str]) -> dict[str, int]:
        return self.store.keys_of(ids)

    def keys_by_title(self, titles: Iterable[str]) -> dict[str, int]:
        # All titles normalised once per generation: 0.6 s at 79.5k papers, then a dict.
        if self._titles is None:
            found: dict[str, int] = {}
            for key, title in self.store.titles():
                found.setdefault(normalise_title(title), key)  # a shared title: the oldest
            found.pop("", None)
            self._titles = found
        return {title: self._titles[title] for title in titles if title in self._titles}

    def keys_by_identifier(self, kind: str, values: Iterable[str]) -> dict[str, int]:
        return self.store.keys_by_identifier(kind, values)

    def papers(self, keys: Iterable[int]) -> dict[int, Paper]:
        return self.store.papers(keys)

    def vectors(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        return self.parts.vectors.reconstruct(keys)

    def _allowed_keys(self, filters: Filters | None) -> NDArray[np.int64] | None:
        """The keys `filters` admits; remembered, as a batch of queries shares them."""
        if not filters:
            return None
        if self._allowed is None or self._allowed[0] != filters:
            self._allowed = (filters, self.store.filter_keys(filters))
        return self._allowed[1]

    def dense(self, vector: NDArray[np.float32], depth: int, filters: Filters | None,
              exclude: NDArray[np.int64]) -> Ranked:
        scores, keys = self.parts.vectors.search(vector[None, :], depth,
                                                 allowed=self._allowed_keys(filters),
                                                 exclude=exclude)
        valid = keys[0] >= 0
        return scores[0][valid], keys[0][valid]

    def _lexical_scores(self, text: str) -> NDArray[np.float32]:
        """Every row's score for `text`; remembered, as a query asks for its hits' too."""
        if self._scores is None or self._scores[0] != text:
            self._scores = (text, self.parts.lexical.scores(text))
        return self._scores[1]

    def lexical(self, text: str, depth: int, filters: Filters | None,
                exclude: NDArray[np.int64]) -> Ranked:
        return self.parts.lexical.top(self._lexical_scores(text), depth,
                                      self._allowed_keys(filters), exclude)

    def lexical_scores(self, text: str, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        return self._lexical_scores(text)[self.parts.lexical.rows(keys)]

    @property
    def words(self) -> WordStatistics:
        return self.parts.lexical

    def check(self) -> list[str]:
        problems = []
        stored = self.store.keys()
        held = {"the vector index": self.parts.vectors.keys(),
                "the lexical index": self.parts.lexical.keys()}
        for part, keys in held.items():
            if not np.array_equal(np.sort(keys), stored):
                only, lacks = np.setdiff1d(keys, stored), np.setdiff1d(stored, keys)
                problems.append(f"{part} holds {len(keys)} papers, the paper store "
                                f"{len(stored)}: {len(only)} only in {part}, {len(lacks)} "
                                f"missing from it")
        if len(stored) != self.manifest.count:
            problems.append(f"the manifest counts {self.manifest.count} papers, the paper "
                            f"store holds {len(stored)}")
        integrity = self.store.integrity()
        if integrity != "ok":
            problems.append(f"the paper store is damaged: {integrity}")
        return problems

    def close(self) -> None:
        self.store.close()
        self.lease.release()
