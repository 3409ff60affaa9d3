"""`embedsearch upgrade`: an index written by an earlier embedsearch, rewritten in this
version's format as one new generation.

Under the writers' lock, the newest manifest is read and migrated in memory (see
`manifest`), and the index's storage writes the generation anew, adding what its data
lacks (a lexical index, the paper store's identifier columns). It is published like any
write, so the old generation is kept until the new one is in place and a reader still
holding it keeps it; a running server moves to the new one at its next request. An
index already in this version's format is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from . import storage_class
from .base import storage_kind
from .directory import DEFAULT_WAIT, IndexDirectory
from .manifest import MANIFEST, missing_records

__all__ = ["upgrade_index"]


def upgrade_index(index: str | os.PathLike[str], *, wait: float | None = DEFAULT_WAIT,
                  secrets: Mapping[str, str] | None = None) -> list[str]:
    """Bring the index at `index` to this version's format; what was added or changed,
    one line each ([] when it was up to date, and nothing is written). A format newer
    than this code is refused with the version that wrote it."""
    directory = IndexDirectory(index)
    directory.read_manifest(upgrading=True)  # refuse a missing, foreign or newer index now
    with directory.write(replace=True, wait=wait, upgrading=True) as staging:
        previous = staging.previous
        assert previous is not None  # write(replace=True) on an existing index
        changes = missing_records((directory.path / MANIFEST).read_text(encoding="utf-8"))
        storage = storage_class(storage_kind(previous))(directory, previous.storage, secrets)
        try:
            return storage.upgrade(staging, previous, changes)
        finally:
            storage.close()
