"""The Milvus storage: an index's vectors, words and papers in a Milvus collection.

The index directory keeps what it always keeps (manifests, the writers' lock, leases)
plus, in each generation, the word statistics evidence needs (`words.WordCounts`);
the papers, their vectors (HNSW, inner product) and their BM25 terms live in Milvus, in
a Milvus Lite file (`./papers.db`) or on a server (`http://host:19530`).

A build writes a new physical collection `{collection}_gNNNNNN` and only when it is
complete points the alias `{collection}` at it and drops the one it replaced, so a
failed rebuild leaves the old index as it was. Adds and removes change the collection
in place (Milvus has no copy-on-write), so unlike local files an older generation's
view sees them too; its manifest's count is what `len` says.

    storage.py      the writes (`MilvusStorage`)
    view.py         the reads (`MilvusView`)
    schema.py       the collection's fields, rows and filter expressions
    connection.py   the shared client, its errors in our words
Here: the target (`Milvus`) and the storage kind's entry (`STORAGE`).
"""


from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigurationError
from ..base import StorageKind, Target
from .connection import MilvusError, is_lite
from .storage import MilvusStorage, check_name
from .view import MilvusView

__all__ = ["STORAGE", "Milvus", "MilvusError", "MilvusStorage", "MilvusView", "is_lite"]

#: What `--storage milvus:URI` takes as `--storage-option KEY=VALUE`.
OPTIONS = ("collection", "token")


@dataclass(frozen=True)
class Milvus:
    """A Milvus collection as where a new index's data is to live: a Milvus Lite file
    (`./papers.db`) or a server (`http://host:19530`, with `token` if it asks for one)."""

    uri: str
    collection: str = "papers"
    token: str | None = None
    kind: str = "milvus"

    def settings(self) -> dict[str, Any]:
        """What the manifest records: the URI (a Lite file's made absolute) and the
        collection; never the token."""
        uri = os.path.abspath(os.path.expanduser(self.uri)) if is_lite(self.uri) else self.uri
        return {"kind": self.kind, "uri": uri, "collection": self.collection}

    def secrets(self) -> dict[str, Any]:
        """The token, if given: opening needs it and it is never written to disk."""
        return {"token": self.token} if self.token else {}

    def __repr__(self) -> str:  # never the token
        return f"Milvus(uri={self.uri!r}, collection={self.collection!r})"


def collection_name(folder: str) -> str:
    """An index folder's name as a Milvus collection name: letters, digits and
    underscores, not starting with a digit."""
    name = re.sub(r"\W", "_", folder, flags=re.ASCII) or "papers"
    return f"_{name}" if name[0].isdigit() else name


def _target(location: str, options: Mapping[str, str], index_name: str) -> Target:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ConfigurationError(f"'{unknown[0]}' is not an option of Milvus, which takes "
                                 f"{', '.join(OPTIONS)}", parameter="storage_option")
    if not location:
        raise ConfigurationError("milvus needs a location: a Milvus Lite file "
                                 "(milvus:./papers.db) or a server (milvus:http://HOST:19530)",
                                 parameter="storage")
    collection = check_name(options.get("collection") or collection_name(index_name))
    return Milvus(location, collection, token=options.get("token") or None)


STORAGE = StorageKind(MilvusStorage, _target)
