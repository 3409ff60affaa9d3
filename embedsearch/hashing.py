"""Content hashes of files: how models are fingerprinted and index files checked."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["sha256_file"]

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """Hex sha256 of the file at `path`, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
