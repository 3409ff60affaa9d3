"""The embedding cache: a vector is computed once per (model, backend, exact text).

Rebuilding an index, `add`, `eval` and the benchmarks ask the cache first. It is one
SQLite file in write-ahead mode, so several processes can use it at once; every batch
is committed in its own transaction, so an interrupted build keeps what it encoded and
never leaves a half-written vector. The file is bounded: past `max_bytes` the least
recently used vectors are dropped.

A cache must never hand back a wrong vector, and a broken cache must never stop a
build: each row carries a digest of its key and vector, checked on every read (a row
that fails is dropped and re-encoded), and a file SQLite cannot read is set aside as
`embeddings.sqlite.damaged-<time>` with a warning, and a new one started.
"""

from __future__ import annotations

import hashlib
import logging
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
_SCHEMA_VERSION = 2  # 2: each row's digest
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key BLOB PRIMARY KEY,
    vector BLOB NOT NULL,
    digest BLOB NOT NULL,
    used INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
"""
_log = logging.getLogger("embedsearch")
_DAMAGE_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB


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


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """A file SQLite cannot read as a database (not a busy or full one)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _DAMAGE_CODES
    return "malformed" in str(exc) or "not a database" in str(exc)


def _digest(key: bytes, vector: bytes) -> bytes:
    return hashlib.blake2b(key + vector, digest_size=8).digest()


class EmbeddingCache:
    """Vectors by (namespace, text); the namespace names the model and backend."""

    def __init__(self, directory: str | os.PathLike[str], *,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / _FILE
        self.max_bytes = max_bytes
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as exc:
            if not _is_damage(exc):
                raise
            self._set_aside(exc)
            self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                db.executescript("DROP TABLE IF EXISTS vectors;" + _SCHEMA
                                 + f"PRAGMA user_version = {_SCHEMA_VERSION};")
        except BaseException:
            db.close()
            raise
        return db

    def _set_aside(self, exc: sqlite3.DatabaseError) -> None:
        """Move a file SQLite cannot read out of the way (kept for a post-mortem)."""
        if hasattr(self, "_db"):
            self._db.close()
        aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
        for suffix in ("", "-wal", "-shm"):
            source = self.path.with_name(self.path.name + suffix)
            if source.exists():
                os.replace(source, aside.with_name(aside.name + suffix))
        _log.warning("the embedding cache %s is damaged (%s); it was moved to %s and a new "
                     "one started: its texts will be encoded again", self.path, exc, aside)

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        """Go on without the cache's answer: set a damaged file aside, or just warn."""
        if _is_damage(exc):
            self._set_aside(exc)
            self._db = self._connect()
        else:
            _log.warning("the embedding cache %s could not be used (%s); going on without "
                         "it", self.path, exc)

    def close(self) -> None:
        self._db.close()

    def get(self, namespace: str, texts: Sequence[str], dim: int) -> dict[int, NDArray[np.float32]]:
        """Cached vectors of `texts` by position; misses (and damaged rows) are absent."""
        try:
            return self._get(namespace, texts, dim)
        except sqlite3.DatabaseError as exc:
            self._recover(exc)
            return {}

    def _get(self, namespace: str, texts: Sequence[str], dim: int
             ) -> dict[int, NDArray[np.float32]]:
        keys = [_key(namespace, text) for text in texts]
        positions: dict[bytes, list[int]] = {}
        for position, key in enumerate(keys):
            positions.setdefault(key, []).append(position)
        found: dict[int, NDArray[np.float32]] = {}
        unique = list(positions)
        for start in range(0, len(unique), _BATCH):
            chunk = unique[start : start + _BATCH]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT key, vector, digest FROM vectors WHERE key IN ({marks})",
                chunk).fetchall()
            good = [(key, blob) for key, blob, digest in rows
                    if len(blob) == 4 * dim and digest == _digest(key, blob)]
            if len(good) < len(rows):
                kept = {key for key, _ in good}
                self._drop_damaged([key for key, _, _ in rows if key not in kept])
            for key, blob in good:
                for position in positions[key]:
                    found[position] = np.frombuffer(blob, dtype=np.float32)
            if good:
                with self._db:
                    self._db.executemany("UPDATE vectors SET used = ? WHERE key = ?",
                                         [(time.time_ns() // 1000, key) for key, _ in good])
        return found

    def _drop_damaged(self, keys: list[bytes]) -> None:
        _log.warning("%d damaged vector(s) in the embedding cache %s were dropped; their "
                     "texts will be encoded again", len(keys), self.path)
        with self._db:
            self._db.executemany("DELETE FROM vectors WHERE key = ?", [(key,) for key in keys])

    def put(self, namespace: str, texts: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Store `vectors` (one row per text) in one transaction, then keep within bounds."""
        now = time.time_ns() // 1000  # microseconds: batches written in one second still order
        rows = []
        for text, vector in zip(texts, vectors):
            key, blob = _key(namespace, text), np.ascontiguousarray(vector, np.float32).tobytes()
            rows.append((key, blob, _digest(key, blob), now))
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
        except sqlite3.DatabaseError as exc:  # the vectors are computed: only caching fails
            self._recover(exc)
            return
        if self._bytes() > self.max_bytes:
            self.prune(int(self.max_bytes * 0.9))

    def _bytes(self) -> int:
        """Size of the database in pages in use: O(1), unlike summing the rows."""
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
        size = self._db.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def integrity(self) -> str:
        """SQLite's own check of the cache file: "ok", or what it found damaged."""
        return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

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
