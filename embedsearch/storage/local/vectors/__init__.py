"""The vector index: unit vectors under int64 keys, searched by inner product.

`create_index` makes an empty index of a type (`flat`, `hnsw`, `hnsw-sq8`, `ivf`, `ivfpq`,
`auto` or a FAISS factory string); `load_index` reads one back from what the manifest
recorded. A new implementation is one module defining a `VectorIndex` subclass with
`@register_vector_index`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...records import VectorIndexRecord
from .base import VectorIndex, register_vector_index, vector_index_class
from .faiss_index import FaissIndex
from .reranked import COMPRESSED_TYPES, RerankedIndex
from .tuning import (
    EXACT_MAX,
    SEGMENT_EXACT_MAX,
    choose_index_type,
    passage_index_rule,
    segment_index_type,
)

__all__ = [
    "EXACT_MAX",
    "INDEX_TYPES",
    "SEGMENT_EXACT_MAX",
    "VectorIndex",
    "choose_index_type",
    "create_index",
    "index_files",
    "load_index",
    "passage_index_rule",
    "register_vector_index",
    "segment_index_type",
]

#: Named index types; anything else is passed to FAISS as a factory string.
INDEX_TYPES = ("auto", "flat", "hnsw", "hnsw-sq8", "ivf", "ivfpq")


def create_index(kind: str, dim: int, count: int, params: dict[str, Any] | None = None,
                 exact_max: int = EXACT_MAX, memory_budget: int | None = None) -> VectorIndex:
    """An empty index of type `kind` sized for `count` vectors.

    `auto` applies `choose_index_type`: exact up to `exact_max`, then HNSW over 8-bit
    codes re-ranked exactly, or ivfpq when `memory_budget` (bytes) is too small for it.
    """
    if kind == "auto":
        kind = choose_index_type(count, exact_max, memory_budget=memory_budget, dim=dim)
    if kind in COMPRESSED_TYPES:
        return RerankedIndex.create(dim, count, params, kind)
    return FaissIndex.create(kind, dim, count, params)


def load_index(directory: Path, meta: VectorIndexRecord, dim: int) -> VectorIndex:
    """The index saved in `directory`, described by the manifest record `meta`."""
    cls = vector_index_class(meta.implementation)
    return cls.load(directory, dim, meta.type, dict(meta.params))


def index_files(meta: VectorIndexRecord) -> tuple[str, ...]:
    """The files an index described by the manifest record `meta` saves."""
    return vector_index_class(meta.implementation).FILES
