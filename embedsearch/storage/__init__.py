"""Where an index's vectors, words and papers live: local files, or a Milvus collection.

`Storage` and `View` are the interface (`base`); `layout` is the index directory every
backend keeps (manifests, generations, leases, the writers' lock); `exact` is the
exact search every backend falls back on and is tested against. Each backend is one
folder providing a `Backend` named `BACKEND`, listed once in `BACKENDS` below:

    storage/local/    FAISS vectors, BM25 arrays and SQLite beside the manifest
    storage/milvus/   a Milvus collection (Milvus Lite file or server)

A backend is imported when an index of its kind is opened or built, so local files
never import pymilvus.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module

from ..errors import ConfigurationError
from .base import (
    DEFAULT_LEXICAL_FIELDS,
    Backend,
    IndexOptions,
    Ranked,
    Storage,
    Target,
    Update,
    View,
    WordStatistics,
    storage_kind,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_LEXICAL_FIELDS",
    "Backend",
    "IndexOptions",
    "Ranked",
    "Storage",
    "Target",
    "Update",
    "View",
    "WordStatistics",
    "backend",
    "parse_target",
    "storage_class",
    "storage_kind",
]

#: Every kind of storage: the kind a manifest records -> the folder that provides it.
#: A new backend is one folder here and one line in this table.
BACKENDS: dict[str, str] = {
    "local": "local",
    "milvus": "milvus",
}


def backend(kind: str) -> Backend:
    """The backend of `kind`; LookupError names the known ones."""
    if kind not in BACKENDS:
        raise LookupError(f"unknown index storage '{kind}' (known: {', '.join(BACKENDS)})")
    found: Backend = import_module(f".{BACKENDS[kind]}", __name__).BACKEND
    return found


def storage_class(kind: str) -> type[Storage]:
    """The storage of `kind`; LookupError names the known ones."""
    return backend(kind).storage


def parse_target(uri: str, options: Mapping[str, str] | None = None,
                 index_name: str = "papers") -> Target:
    """Where a new index is to live, from `KIND` or `KIND:LOCATION` and options:
    `local`, `milvus:./papers.db`, `milvus:http://host:19530` with `collection` and
    `token` options. `index_name` names what a backend names after the index."""
    kind, _, location = uri.partition(":")
    if kind not in BACKENDS:
        raise ConfigurationError(f"unknown storage '{kind}' in '{uri}'; use one of "
                                 f"{', '.join(BACKENDS)}, as KIND or KIND:LOCATION",
                                 parameter="storage")
    return backend(kind).target(location, dict(options or {}), index_name)

