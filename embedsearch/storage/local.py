"""The local storage: an index's vectors (FAISS), words (BM25 arrays) and papers (SQLite)
as files in each generation's folder beside the manifest.

A write stages a complete new generation from the newest one (a private copy of its
parts, so the generation being served is never touched) and publishes it in one rename.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._version import __version__
from ..errors import PaperNotFoundError
from ..filters import Filters
from ..layout import IndexDirectory, Lease, Manifest, Staging
from ..lexical import LexicalIndex
from ..papers import Paper, normalise_title
from ..store import STORE_FILE, PaperStore
from ..vectors import EXACT_MAX, VectorIndex, choose_index_type, create_index, load_index
from .base import (
    IndexOptions,
    Ranked,
    Storage,
    View,
    WordStatistics,
    lexical_texts,
    register_storage,
)

__all__ = ["LocalStorage", "LocalView", "Parts", "load_parts"]


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

    def close(self) -> None:
        self.store.close()
        self.lease.release()


@register_storage("local")
class LocalStorage(Storage):
    """Today's files: FAISS, BM25 arrays and SQLite in each generation's folder."""

    def check_build(self, options: IndexOptions, count: int, dim: int, *,
                    overwrite: bool) -> None:
        create_index(options.index_type, dim, count, options.index_params, options.exact_max,
                     options.memory_budget)  # an unknown type or bad parameter fails here

    def build(self, staging: Staging, papers: Sequence[Paper], vectors: NDArray[np.float32],
              manifest: Manifest, options: IndexOptions, *, progress: bool = False
              ) -> Manifest:
        index = create_index(options.index_type, vectors.shape[1], len(papers),
                             options.index_params, options.exact_max, options.memory_budget)
        with PaperStore.transaction(staging.dir / STORE_FILE, create=True) as store:
            keys = store.insert(papers)
        index.add(keys, vectors)
        parts = Parts(index, LexicalIndex.build(keys, lexical_texts(papers, manifest)))
        manifest.index = {**index.meta(), "auto": options.index_type == "auto",
                          "exact_max": options.exact_max, "memory_budget": options.memory_budget}
        manifest.storage = {"kind": self.kind}
        return self._commit(staging, parts, manifest)

    def view(self, manifest: Manifest, lease: Lease, *, checksums: bool) -> View:
        self.directory.verify(manifest, checksums=checksums)
        return LocalView.of(self.directory, manifest, load_parts(self.directory, manifest),
                            lease)

    def add(self, staging: Staging, newest: Manifest, papers: Sequence[Paper],
            vectors: NDArray[np.float32]) -> tuple[Manifest, View] | None:
        parts = load_parts(self.directory, newest)  # a private copy: the served one is read
        with self._copy_store(newest, staging) as store:
            known = store.keys_of(paper.id for paper in papers)
            fresh = [row for row, paper in enumerate(papers) if paper.id not in known]
            if not fresh:
                return None
            papers = [papers[row] for row in fresh]
            keys = store.insert(papers)
        parts.vectors.add(keys, vectors[fresh])
        parts.lexical.add(keys, lexical_texts(papers, newest))
        parts.vectors = _retype(parts.vectors, newest, len(parts.vectors))
        return self._publish(staging, parts, newest)

    def remove(self, staging: Staging, newest: Manifest,
               paper_ids: Sequence[str]) -> tuple[Manifest, View]:
        parts = load_parts(self.directory, newest)
        with self._copy_store(newest, staging) as store:
            found = store.keys_of(paper_ids)
            for paper_id in paper_ids:
                if paper_id not in found:  # removed by another process meanwhile
                    raise PaperNotFoundError(paper_id, self.directory.path)
            keys = np.array([found[paper_id] for paper_id in paper_ids], dtype=np.int64)
            store.delete(keys)
        parts.vectors.remove(keys)
        parts.lexical.remove(keys)
        return self._publish(staging, parts, newest)

    def _publish(self, staging: Staging, parts: Parts,
                 newest: Manifest) -> tuple[Manifest, View]:
        """Commit the updated `parts` of `newest` and open a view of them."""
        manifest = dataclasses.replace(newest, count=len(parts.vectors))
        committed = self._commit(staging, parts, manifest)
        return committed, LocalView.of(self.directory, committed, parts)

    def _commit(self, staging: Staging, parts: Parts, manifest: Manifest) -> Manifest:
        parts.vectors.save(staging.dir)
        parts.lexical.save(staging.dir)
        manifest.index = {**manifest.index, **parts.vectors.meta()}
        manifest.software = f"embedsearch {__version__}"
        return self.directory.commit(staging, manifest)

    def _copy_store(self, manifest: Manifest,
                    staging: Staging) -> AbstractContextManager[PaperStore]:
        """A transaction on a copy of the current store, inside the staged generation."""
        shutil.copyfile(self.directory.files_dir(manifest) / STORE_FILE,
                        staging.dir / STORE_FILE)
        return PaperStore.transaction(staging.dir / STORE_FILE)


def _retype(index: VectorIndex, manifest: Manifest, count: int) -> VectorIndex:
    """The index re-made as the type `auto` now picks, when growth crossed the threshold."""
    if not manifest.index.get("auto"):
        return index
    wanted = choose_index_type(count, int(manifest.index.get("exact_max", EXACT_MAX)),
                               memory_budget=manifest.index.get("memory_budget"),
                               dim=index.dim)
    if wanted == index.kind:
        return index
    keys = index.keys()
    fresh = create_index(wanted, index.dim, count)
    fresh.add(keys, index.reconstruct(keys))
    return fresh
