"""Where an index's vectors, words and papers live: local files, or a Milvus collection.

`Storage` and `View` are the interface (`base`); `directory` is the index directory every
storage keeps (manifests, generations, leases, the writers' lock); `exact` is the
exact search every storage falls back on and is tested against. Each storage kind is one
folder providing a `StorageKind` named `STORAGE`, listed once in `STORAGE_KINDS` below:

    storage/local/    segments of FAISS vectors, BM25 postings and SQLite beside the manifest
    storage/milvus/   a Milvus collection (Milvus Lite file or server)

A storage kind is imported when an index of its kind is opened or built, so local files
never import pymilvus.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module

from ..errors import ConfigurationError
from .base import (
    DEFAULT_LEXICAL_FIELDS,
    IndexOptions,
    PaperBatch,
    PassageRanked,
    Ranked,
    Storage,
    StorageKind,
    Target,
    Update,
    View,
    WordStatistics,
    passage_rows,
    storage_kind,
)

__all__ = [
    "STORAGE_KINDS",
    "DEFAULT_LEXICAL_FIELDS",
    "StorageKind",
    "IndexOptions",
    "PaperBatch",
    "PassageRanked",
    "Ranked",
    "Storage",
    "Target",
    "Update",
    "View",
    "WordStatistics",
    "find_storage",
    "parse_target",
    "passage_rows",
    "storage_class",
    "storage_kind",
]

#: Every kind of storage: the kind a manifest records -> the folder that provides it.
#: A new storage kind is one folder here and one line in this table.
STORAGE_KINDS: dict[str, str] = {
    "local": "local",
    "milvus": "milvus",
}


def find_storage(kind: str) -> StorageKind:
    """The storage kind `kind`; LookupError names the known ones."""
    if kind not in STORAGE_KINDS:
        raise LookupError(f"unknown index storage '{kind}' (known: {', '.join(STORAGE_KINDS)})")
    found: StorageKind = import_module(f".{STORAGE_KINDS[kind]}", __name__).STORAGE
    return found


def storage_class(kind: str) -> type[Storage]:
    """The storage of `kind`; LookupError names the known ones."""
    return find_storage(kind).storage


def parse_target(uri: str, options: Mapping[str, str] | None = None,
                 index_name: str = "papers") -> Target:
    """Where a new index is to live, from `KIND` or `KIND:LOCATION` and options:
    `local`, `milvus:./papers.db`, `milvus:http://host:19530` with `collection` and
    `token` options. `index_name` names what a storage names after the index."""
    kind, _, location = uri.partition(":")
    if kind not in STORAGE_KINDS:
        raise ConfigurationError(f"unknown storage '{kind}' in '{uri}'; use one of "
                                 f"{', '.join(STORAGE_KINDS)}, as KIND or KIND:LOCATION",
                                 parameter="storage")
    return find_storage(kind).target(location, dict(options or {}), index_name)

