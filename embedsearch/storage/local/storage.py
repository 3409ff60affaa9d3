"""The local storage's writes: a write stages a complete new generation from the newest
one (a private copy of its parts, so the generation being served is never touched) and
publishes it in one rename.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Sequence
from contextlib import AbstractContextManager

import numpy as np
from numpy.typing import NDArray

from ...papers import Paper
from ..base import IndexOptions, Storage, View, lexical_texts
from ..layout import Lease, Manifest, Staging
from .lexical import LEXICAL_FILE, LexicalIndex
from .store import STORE_FILE, PaperStore
from .vectors import EXACT_MAX, VectorIndex, choose_index_type, create_index
from .view import LocalView, Parts, load_parts

__all__ = ["LocalStorage"]


class LocalStorage(Storage):
    """Today's files: FAISS, BM25 arrays and SQLite in each generation's folder."""

    kind = "local"

    def check_build(self, options: IndexOptions, count: int, dim: int, *,
                    overwrite: bool) -> None:
        _empty_index(options, dim, count)  # an unknown type or bad parameter fails here

    def build(self, staging: Staging, papers: Sequence[Paper], vectors: NDArray[np.float32],
              manifest: Manifest, options: IndexOptions, *, progress: bool = False
              ) -> Manifest:
        index = _empty_index(options, vectors.shape[1], len(papers))
        with PaperStore.transaction(staging.dir / STORE_FILE, create=True) as store:
            keys = store.insert(papers)
        index.add(keys, vectors)
        parts = Parts(index, LexicalIndex.build(keys, lexical_texts(papers, manifest)))
        manifest.index = {**index.meta(), "auto": options.index_type == "auto",
                          "exact_max": _exact_max(options), "memory_budget": options.memory_budget}
        manifest.storage = {"kind": self.kind}
        return self._commit(staging, parts, manifest)

    def view(self, manifest: Manifest, lease: Lease, *, checksums: bool) -> View:
        self.directory.verify(manifest, checksums=checksums)
        return LocalView.of(self.directory, manifest, load_parts(self.directory, manifest),
                            lease)

    def keys_of(self, manifest: Manifest, paper_ids: Sequence[str]) -> dict[str, int]:
        store = PaperStore.open(self.directory.files_dir(manifest) / STORE_FILE)
        try:
            return store.keys_of(paper_ids)
        finally:
            store.close()

    def insert(self, staging: Staging, newest: Manifest, papers: Sequence[Paper],
               vectors: NDArray[np.float32]) -> tuple[Manifest, View]:
        parts = load_parts(self.directory, newest)  # a private copy: the served one is read
        with self._copy_store(newest, staging) as store:
            keys = store.insert(papers)
        parts.vectors.add(keys, vectors)
        parts.lexical.add(keys, lexical_texts(papers, newest))
        parts.vectors = _retype(parts.vectors, newest, len(parts.vectors))
        return self._publish(staging, parts, newest)

    def delete(self, staging: Staging, newest: Manifest,
               keys: NDArray[np.int64]) -> tuple[Manifest, View]:
        parts = load_parts(self.directory, newest)
        with self._copy_store(newest, staging) as store:
            store.delete(keys)
        parts.vectors.remove(keys)
        parts.lexical.remove(keys)
        return self._publish(staging, parts, newest)

    def replace_vectors(self, staging: Staging, newest: Manifest, keys: NDArray[np.int64],
                        vectors: NDArray[np.float32]) -> tuple[Manifest, View]:
        parts = load_parts(self.directory, newest)
        parts.vectors.remove(keys)
        parts.vectors.add(keys, vectors)
        self.directory.link_files(newest, staging, [STORE_FILE])
        return self._publish(staging, parts, newest)

    def upgrade(self, staging: Staging, previous: Manifest, changes: list[str]) -> list[str]:
        files = self.directory.files_dir(previous)
        store = PaperStore.open(files / STORE_FILE)
        try:
            own = [] if store.has_identifiers else ["the paper store's doi and arxiv_id"]
        finally:
            store.close()
        lexical = (files / LEXICAL_FILE).is_file()
        if not lexical:
            own.append("a lexical index (BM25) of the stored papers")
        if not changes and not own:
            return []
        with self._copy_store(previous, staging) as store:  # writable: gains the columns
            papers = list(store.iter_papers())
        kept = [name for name in previous.files if name not in (STORE_FILE, LEXICAL_FILE)]
        self.directory.link_files(previous, staging, kept)
        if lexical:
            self.directory.link_files(previous, staging, [LEXICAL_FILE])
        else:
            keys = np.array([key for key, _ in papers], dtype=np.int64)
            LexicalIndex.build(keys, lexical_texts([p for _, p in papers], previous)
                               ).save(staging.dir)
        self.commit(staging, previous)
        return changes + own

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
        return self.commit(staging, manifest)

    def _copy_store(self, manifest: Manifest,
                    staging: Staging) -> AbstractContextManager[PaperStore]:
        """A transaction on a copy of the current store, inside the staged generation."""
        shutil.copyfile(self.directory.files_dir(manifest) / STORE_FILE,
                        staging.dir / STORE_FILE)
        return PaperStore.transaction(staging.dir / STORE_FILE)


def _exact_max(options: IndexOptions) -> int:
    return EXACT_MAX if options.exact_max is None else options.exact_max


def _empty_index(options: IndexOptions, dim: int, count: int) -> VectorIndex:
    return create_index(options.index_type, dim, count, options.index_params,
                        _exact_max(options), options.memory_budget)


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
