"""The embedding cache: a vector is computed once per (model, backend, exact text).

Rebuilding an index, `add`, `eval` and the benchmarks ask the cache first. It is one
SQLite file in write-ahead mode, so several processes can use it at once; every batch
is committed in its own transaction, so an interrupted build keeps what it encoded and
never leaves a half-written vector. The file is bounded: past `max_bytes` the least
recently used vectors are dropped.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = ["DEFAULT_MAX_BYTES", "CacheStats", "EmbeddingCache", "default_cache_dir"]

#: Default bound: ~1.3M vectors of 384 floats, plenty for a million-paper corpus.
DEFAULT_MAX_BYTES = 2 * 1024**3
_FILE = "embeddings.sqlite"
_BATCH = 500
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key BLOB PRIMARY KEY,
    vector BLOB NOT NULL,
    used INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
"""


def default_cache_dir() -> Path:
    """$EMBEDSEARCH_CACHE_DIR, else $XDG_CACHE_HOME/embedsearch, else ~/.cache/embedsearch."""
    if os.environ.get("EMBEDSEARCH_CACHE_DIR"):
        return Path(os.environ["EMBEDSEARCH_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "embedsearch"


@dataclass(frozen=True)
class CacheStats:
    """How much the cache holds."""

    path: str
    vectors: int
    bytes: int


def _key(namespace: str, text: str) -> bytes:
    return hashlib.blake2b(f"{namespace}\0{text}".encode(), digest_size=20).digest()


class EmbeddingCache:
    """Vectors by (namespace, text); the namespace names the model and backend."""

    def __init__(self, directory: str | os.PathLike[str], *,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / _FILE
        self.max_bytes = max_bytes
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def get(self, namespace: str, texts: Sequence[str], dim: int) -> dict[int, NDArray[np.float32]]:
        """Cached vectors of `texts` by position; misses are absent."""
        keys = [_key(namespace, text) for text in texts]
        positions: dict[bytes, list[int]] = {}
        for position, key in enumerate(keys):
            positions.setdefault(key, []).append(position)
        found: dict[int, NDArray[np.float32]] = {}
        unique = list(positions)
        for start in range(0, len(unique), _BATCH):
            chunk = unique[start : start + _BATCH]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})",
                                    chunk).fetchall()
            for key, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if len(vector) == dim:
                    for position in positions[key]:
                        found[position] = vector
            if rows:
                with self._db:
                    self._db.executemany("UPDATE vectors SET used = ? WHERE key = ?",
                                         [(time.time_ns() // 1000, key) for key, _ in rows])
        return found

    def put(self, namespace: str, texts: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Store `vectors` (one row per text) in one transaction, then keep within bounds."""
        now = time.time_ns() // 1000  # microseconds: batches written in one second still order
        rows = [(_key(namespace, text), np.ascontiguousarray(vector, np.float32).tobytes(), now)
                for text, vector in zip(texts, vectors)]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
        if self._bytes() > self.max_bytes:
            self.prune(int(self.max_bytes * 0.9))

    def _bytes(self) -> int:
        """Size of the database in pages in use: O(1), unlike summing the rows."""
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
        size = self._db.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def stats(self) -> CacheStats:
        count = self._db.execute("SELECT count(*) FROM vectors").fetchone()[0]
        return CacheStats(str(self.path), int(count), self._bytes())

    def prune(self, max_bytes: int) -> int:
        """Drop least recently used vectors until the cache fits `max_bytes`; returns how many."""
        stats = self.stats()
        if stats.bytes <= max_bytes or stats.vectors == 0:
            return 0
        excess = int((stats.bytes - max_bytes) / (stats.bytes / stats.vectors)) + 1
        with self._db:
            self._db.execute("DELETE FROM vectors WHERE key IN (SELECT key FROM vectors "
                             "ORDER BY used LIMIT ?)", (excess,))
        self._db.execute("VACUUM")
        return min(excess, stats.vectors)

    def clear(self) -> int:
        """Drop every vector; returns how many there were."""
        count = self.stats().vectors
        with self._db:
            self._db.execute("DELETE FROM vectors")
        self._db.execute("VACUUM")
        return count
