"""Where an index's vectors, words and papers live: local files, or a Milvus collection.

`Storage` and `View` are the interface (see `base`); `storage_class` maps a manifest's
`storage.kind` to its implementation. A new place to keep an index is one module here
with a `@register_storage` class, imported below.
"""

from __future__ import annotations

from .base import (
    DEFAULT_LEXICAL_FIELDS,
    IndexOptions,
    Local,
    Ranked,
    Storage,
    Target,
    View,
    WordStatistics,
    register_storage,
    storage_class,
    storage_kind,
)
from .local import LocalStorage, LocalView, Parts, load_parts
from .milvus import Milvus, MilvusStorage

__all__ = [
    "DEFAULT_LEXICAL_FIELDS",
    "IndexOptions",
    "Local",
    "LocalStorage",
    "LocalView",
    "Milvus",
    "MilvusStorage",
    "Parts",
    "Ranked",
    "Storage",
    "Target",
    "View",
    "WordStatistics",
    "load_parts",
    "register_storage",
    "storage_class",
    "storage_kind",
]
