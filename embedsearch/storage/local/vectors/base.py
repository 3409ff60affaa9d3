"""The `VectorIndex` interface and the registry that maps an implementation's name to its class.

An index holds unit vectors under int64 keys and answers top-k inner-product queries.
Filtering is shared here, once for every implementation: a query may be limited to `allowed`
keys and may `exclude` some, and still gets k hits whenever k admissible vectors exist:
a small admissible subset is searched exactly, and an approximate search that comes
back short is redone exactly.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ....registry import ClassRegistry
from ...exact import Ranked, exact_search, exact_subset_limit
from ...records import VectorIndexRecord

__all__ = ["VectorIndex", "register_vector_index", "vector_index_class"]

_REGISTRY: ClassRegistry[VectorIndex] = ClassRegistry("vector index implementation",
                                                      "implementation")


def register_vector_index(name: str) -> Callable[[type[VectorIndex]], type[VectorIndex]]:
    """Class decorator: make the class loadable under the implementation name `name`."""
    return _REGISTRY.register(name)


def vector_index_class(name: str) -> type[VectorIndex]:
    """The class registered as `name`; LookupError names the known ones."""
    return _REGISTRY.get(name)


class VectorIndex(ABC):
    """Nearest-neighbour search over unit vectors keyed by int64."""

    #: The name its manifest entry records (`meta`): which class loads it.
    implementation: ClassVar[str]
    #: The files `save` writes.
    FILES: ClassVar[tuple[str, ...]]
    #: True when `_search` is exact, so filtering needs no exact fallback.
    exact: bool = False

    def __init__(self, dim: int, kind: str, params: dict[str, Any]) -> None:
        self.dim = dim
        self.kind = kind
        self.params = dict(params)

    # -- what an implementation provides ------------------------------------------------------
    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def keys(self) -> NDArray[np.int64]:
        """Every live key, ascending."""

    @abstractmethod
    def add(self, keys: NDArray[np.int64], vectors: NDArray[np.float32]) -> None: ...

    @abstractmethod
    def reconstruct(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        """The stored vectors of `keys`, in that order."""

    @abstractmethod
    def _search(
        self,
        queries: NDArray[np.float32],
        k: int,
        allowed: NDArray[np.int64] | None,
        exclude: NDArray[np.int64] | None,
    ) -> Ranked:
        """Top-k, restricted as asked; may return fewer than k (padded with key -1)."""

    @abstractmethod
    def save(self, directory: Path) -> list[str]:
        """Write the index into `directory`; returns the file names written."""

    @classmethod
    @abstractmethod
    def load(cls, directory: Path, dim: int, kind: str, params: dict[str, Any]) -> VectorIndex:
        """Read what `save` wrote."""

    def meta(self) -> VectorIndexRecord:
        """What the manifest records to load this index again."""
        return VectorIndexRecord(self.implementation, self.kind, dict(self.params))

    # -- shared behaviour ---------------------------------------------------------------
    def search(
        self,
        queries: NDArray[np.float32],
        k: int,
        *,
        allowed: NDArray[np.int64] | None = None,
        exclude: NDArray[np.int64] | None = None,
    ) -> Ranked:
        """Top-`k` (scores, keys) per query, best first; key -1 pads missing hits."""
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        if allowed is not None:
            allowed = np.unique(np.asarray(allowed, dtype=np.int64))
            if exclude is not None and len(exclude):
                allowed = np.setdiff1d(allowed, exclude, assume_unique=False)
                exclude = None
            if not self.exact and len(allowed) <= exact_subset_limit(len(self)):
                return exact_search(self.reconstruct(allowed), allowed, queries, k)
        scores, keys = self._search(queries, k, allowed, exclude)
        if not self.exact:
            available = len(self) - (len(exclude) if exclude is not None else 0)
            wanted = min(k, len(allowed) if allowed is not None else available)
            short = (keys[:, :wanted] < 0).any(axis=1)
            if short.any():
                scores[short], keys[short] = self._exact(queries[short], k, allowed, exclude)
        return scores, keys

    def _exact(self, queries: NDArray[np.float32], k: int, allowed: NDArray[np.int64] | None,
               exclude: NDArray[np.int64] | None) -> Ranked:
        keys = self.keys() if allowed is None else allowed
        if exclude is not None and len(exclude):
            keys = np.setdiff1d(keys, exclude)
        return exact_search(self.reconstruct(keys), keys, queries, k)
