"""FAISS-backed vector indexes: exact Flat, HNSW, IVF, or any FAISS factory string.

An index is written once, with its segment, and never changed: a removed paper stays in
it until a merge writes a new segment, and the segment's deletions keep it out of every
search. Only an index written before segments (formats 1 and 2 removed vectors in
place) may hold more: HNSW graphs cannot drop nodes, so its removed keys stayed in the
graph as tombstones, absent from the keys file beside it; every search excludes them.
Keys are never reused, so a tombstone never comes back to life.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ....errors import InputError
from ...exact import Ranked
from .base import Allowed, VectorIndex, register_vector_index
from .faisslib import faiss, id_selector, label_selector, set_threads, training_sample, write_index
from .tuning import hnsw_params, ivf_params

__all__ = ["FaissIndex", "factory_for"]


_INDEX_FILE = "vectors.faiss"
_KEYS_FILE = "keys.npy"


def factory_for(kind: str, count: int,
                overrides: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """(FAISS factory string, parameters) for index type `kind` sized for `count` vectors."""
    overrides = overrides or {}
    if kind == "flat":
        return "Flat", {}
    if kind == "hnsw":
        params = {**hnsw_params(count), **overrides}
        return f"HNSW{params['M']},Flat", params
    if kind == "ivf":
        params = {**ivf_params(count), **overrides}
        return f"IVF{params['nlist']},Flat", params
    return kind, dict(overrides)


@register_vector_index("faiss")
class FaissIndex(VectorIndex):
    """One FAISS index under our keys, with the search parameters of its type."""

    FILES = (_INDEX_FILE, _KEYS_FILE)

    def __init__(self, dim: int, kind: str, params: dict[str, Any], index: Any,
                 keys: NDArray[np.int64] | None = None) -> None:
        super().__init__(dim, kind, params)
        self._index = index
        self._ivf = faiss.try_extract_index_ivf(index)
        self._keys = np.zeros(0, np.int64) if keys is None else np.sort(keys.astype(np.int64))
        self._dead = self._tombstones()
        self.exact = kind == "flat"

    @classmethod
    def create(cls, kind: str, dim: int, count: int,
               overrides: dict[str, Any] | None = None) -> FaissIndex:
        """An empty index of type `kind` (flat, hnsw, ivf or a factory string)."""
        factory, params = factory_for(kind, count, overrides)
        try:
            index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
        except RuntimeError as exc:
            reason = str(exc).strip().splitlines()[-1]
            raise InputError(f"--index-type '{kind}': FAISS cannot build '{factory}' "
                             f"({reason}); use auto, flat, hnsw, ivf or a FAISS factory "
                             "string such as 'IVF1024,SQ8'") from None
        if isinstance(index, faiss.IndexHNSW):
            index.hnsw.efConstruction = int(params.get("efConstruction", 40))
        if faiss.try_extract_index_ivf(index) is None:
            # IVF stores our keys itself; everything else maps them through IDMap2,
            # which can also hand a stored vector back by key.
            index = faiss.IndexIDMap2(index)
        else:
            faiss.try_extract_index_ivf(index).set_direct_map_type(faiss.DirectMap.Hashtable)
        return cls(dim, kind, {"factory": factory, **params}, index)

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> NDArray[np.int64]:
        return self._keys

    def _tombstones(self) -> NDArray[np.int64]:
        """Keys still in the FAISS structure but removed (only an HNSW graph written
        before segments holds any)."""
        if self._ivf is not None:
            return np.zeros(0, np.int64)
        stored = faiss.vector_to_array(self._index.id_map)
        return np.setdiff1d(stored, self._keys, assume_unique=True)

    def add(self, keys: NDArray[np.int64], vectors: NDArray[np.float32]) -> None:
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if not self._index.is_trained:
            self._index.train(training_sample(vectors))
        set_threads()
        self._index.add_with_ids(vectors, keys)
        self._keys = np.union1d(self._keys, keys)

    def reconstruct(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        if len(keys) == 0:
            return np.zeros((0, self.dim), np.float32)
        return np.asarray(self._index.reconstruct_batch(keys), dtype=np.float32)

    def _search_params(self, selector: Any) -> Any:
        if self._ivf is not None:
            return faiss.SearchParametersIVF(sel=selector, nprobe=int(self.params.get("nprobe", 1)))
        if "efSearch" in self.params:
            return faiss.SearchParametersHNSW(sel=selector, efSearch=int(self.params["efSearch"]))
        return faiss.SearchParameters(sel=selector) if selector is not None else None

    def _search(self, queries: NDArray[np.float32], k: int, allowed: Allowed | None,
                exclude: NDArray[np.int64] | None) -> Ranked:
        if len(self._dead) and allowed is None:
            exclude = self._dead if exclude is None else np.union1d(exclude, self._dead)
        set_threads(len(queries))
        admitted = None if allowed is None else allowed.derived(
            ("faiss", id(self)), lambda: label_selector(allowed.keys))
        params = self._search_params(id_selector(admitted, exclude))
        scores, keys = self._index.search(queries, k, params=params)
        return scores, keys

    def save(self, directory: Path) -> list[str]:
        write_index(self._index, directory / _INDEX_FILE)
        np.save(directory / _KEYS_FILE, self._keys)
        return [_INDEX_FILE, _KEYS_FILE]

    @classmethod
    def load(cls, directory: Path, dim: int, kind: str, params: dict[str, Any]) -> FaissIndex:
        index = faiss.read_index(str(directory / _INDEX_FILE))
        keys = np.load(directory / _KEYS_FILE, allow_pickle=False)
        return cls(dim, kind, params, index, keys)
