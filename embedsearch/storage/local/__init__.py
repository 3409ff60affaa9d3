"""The local storage: an index's vectors (FAISS), words (BM25 arrays) and papers (SQLite)
as files in each generation's folder beside the manifest.

    segment.py      a segment: an immutable folder of papers, vectors and postings, and
                    the segments open in memory, shared by the views that list them
    view.py         one generation open for reading: its segments, searched and merged
    storage.py      the writes: build, insert, delete, compact, each a new generation
    merging.py      which segments a write merges (the tiered policy), and the merge
    additions.py    when each paper was added, from the keys each write handed out
    upgrading.py    a flat index of an earlier format made its first segment
    paper_store.py  the SQLite paper store (metadata, filters, identifiers)
    lexical.py      the BM25 postings of a segment, and BM25 over a generation's segments
    vectors/        the FAISS vector indexes and the rules that choose and tune them
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigurationError
from ..base import StorageKind, Target
from .merging import MergePolicy
from .storage import LocalStorage
from .view import LocalView

__all__ = ["STORAGE", "Local", "LocalStorage", "LocalView", "MergePolicy"]


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


STORAGE = StorageKind(LocalStorage, _target)
