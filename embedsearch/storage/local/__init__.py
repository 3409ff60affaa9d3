"""The local backend: an index's vectors (FAISS), words (BM25 arrays) and papers (SQLite)
as files in each generation's folder beside the manifest.

    view.py      one generation open for reading
    storage.py   the writes: build, insert, delete, each a new generation
    store.py     the SQLite paper store (metadata, filters, identifiers)
    lexical.py   the BM25 index
    vectors/     the FAISS vector indexes and the rules that choose and tune them
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigurationError
from ..base import Backend, Target
from .storage import LocalStorage
from .view import LocalView, Parts, load_parts

__all__ = ["BACKEND", "Local", "LocalStorage", "LocalView", "Parts", "load_parts"]


@dataclass(frozen=True)
class Local:
    """Files beside the manifest: FAISS, BM25 arrays and SQLite (the default)."""

    kind: str = "local"

    def settings(self) -> dict[str, Any]:
        """What the manifest records: the kind alone (the files are beside it)."""
        return {"kind": self.kind}

    def secrets(self) -> dict[str, Any]:
        """Nothing: local files need no credentials."""
        return {}


def _target(location: str, options: Mapping[str, str], index_name: str) -> Target:
    if location or options:
        raise ConfigurationError("local keeps the files in the index folder and takes no "
                                 "location or option (a collection or token is for "
                                 "milvus:URI)", parameter="storage")
    return Local()


BACKEND = Backend(LocalStorage, _target)
