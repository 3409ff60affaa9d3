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
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import NDArray

from ....registry import ClassRegistry
from ...exact import Ranked, exact_search, exact_subset_limit
from ...keys import find_keys
from ...records import VectorIndexRecord

__all__ = ["Allowed", "VectorIndex", "register_vector_index", "vector_index_class"]

T = TypeVar("T")

_REGISTRY: ClassRegistry[VectorIndex] = ClassRegistry("vector index implementation",
                                                      "implementation")


def register_vector_index(name: str) -> Callable[[type[VectorIndex]], type[VectorIndex]]:
    """Class decorator: make the class loadable under the implementation name `name`."""
    return _REGISTRY.register(name)


def vector_index_class(name: str) -> type[VectorIndex]:
    """The class registered as `name`; LookupError names the known ones."""
    return _REGISTRY.get(name)


class Allowed:
    """The keys a search may return (ascending, unique), with what an index derives from
    them for its search (a FAISS selector, its rows) kept: a view makes one per segment
    and filter, so the queries under one filter derive them once, not each time (at 1M
    papers, sorting a year filter's keys alone cost 49 ms a query)."""

    def __init__(self, keys: NDArray[np.int64]) -> None:
        self.keys: NDArray[np.int64] = np.unique(np.asarray(keys, dtype=np.int64))
        self._derived: dict[object, Any] = {}

    def __len__(self) -> int:
        return len(self.keys)

    def derived(self, name: object, make: Callable[[], T]) -> T:
        """What `make` derives from these keys, made at the first call under `name`."""
        if name not in self._derived:
            self._derived[name] = make()
        found: T = self._derived[name]
        return found

    def without(self, exclude: NDArray[np.int64] | None) -> NDArray[np.int64]:
        """These keys less those of `exclude`."""
        if exclude is None or not len(exclude):
            return self.keys
        return self.keys[np.isin(self.keys, exclude, invert=True)]


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
        allowed: Allowed | None,
        exclude: NDArray[np.int64] | None,
    ) -> Ranked:
        """Top-k, restricted as asked; may return fewer than k (padded with key -1)."""

    def _subset(self, queries: NDArray[np.float32], k: int, keys: NDArray[np.int64]) -> Ranked:
        """Top-k among `keys` alone, a small subset, searched exhaustively."""
        return exact_search(self.reconstruct(keys), keys, queries, k)

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
        allowed: NDArray[np.int64] | Allowed | None = None,
        exclude: NDArray[np.int64] | None = None,
    ) -> Ranked:
        """Top-`k` (scores, keys) per query, best first; key -1 pads missing hits. Only
        `allowed` keys (None: all) and none of `exclude` are returned."""
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        if allowed is not None and not isinstance(allowed, Allowed):
            allowed = Allowed(allowed)
        if allowed is not None and not self.exact and len(allowed) <= exact_subset_limit(len(self)):
            return self._subset(queries, k, allowed.without(exclude))
        scores, keys = self._search(queries, k, allowed, exclude)
        if not self.exact:
            wanted = min(k, self._admissible(allowed, exclude))
            short = (keys[:, :wanted] < 0).any(axis=1)
            if short.any():
                scores[short], keys[short] = self._exact(queries[short], k, allowed, exclude)
        return scores, keys

    def _admissible(self, allowed: Allowed | None, exclude: NDArray[np.int64] | None) -> int:
        """How many keys a search restricted so may return."""
        held = self.keys() if allowed is None else allowed.keys
        if exclude is None or not len(exclude) or not len(held):
            return len(held)
        return len(held) - int(np.count_nonzero(find_keys(held, np.unique(exclude))[1]))

    def _exact(self, queries: NDArray[np.float32], k: int, allowed: Allowed | None,
               exclude: NDArray[np.int64] | None) -> Ranked:
        """A search that came back short, done again over every admissible key."""
        keys = self.keys() if allowed is None else allowed.keys
        if exclude is not None and len(exclude):
            keys = np.setdiff1d(keys, exclude)
        return self._subset(queries, k, keys)
