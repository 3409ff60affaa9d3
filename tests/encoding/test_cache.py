"""The embedding cache: a damaged file is set aside with a warning, a damaged vector is
never returned."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from embedsearch.encoding import Encoder

# -- the embedding cache ---------------------------------------------------------------------
TEXTS = ["Sparse autoencoders find interpretable features.",
         "Diffusion models for protein design.", "A benchmark of long-context reasoning."]


def _reference() -> np.ndarray:
    encoder = Encoder(backend="torch", cache=False)
    try:
        return encoder.encode_documents(TEXTS)
    finally:
        encoder.close()


def _cached_encode(cache_dir: Path) -> np.ndarray:
    encoder = Encoder(backend="torch", cache_dir=cache_dir)
    try:
        return encoder.encode_documents(TEXTS)
    finally:
        encoder.close()


def test_a_damaged_cache_file_is_set_aside_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    expected = _reference()
    np.testing.assert_allclose(_cached_encode(tmp_path), expected, atol=1e-6)
    cache_file = tmp_path / "embeddings.sqlite"
    for leftover in tmp_path.glob("embeddings.sqlite-*"):
        leftover.unlink()
    data = bytearray(cache_file.read_bytes())
    data[0:4096] = os.urandom(4096)  # the header page: SQLite no longer reads the file
    cache_file.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="embedsearch"):
        np.testing.assert_allclose(_cached_encode(tmp_path), expected, atol=1e-6)
    assert "damaged" in caplog.text
    assert list(tmp_path.glob("embeddings.sqlite.damaged-*"))


def test_a_damaged_cached_vector_is_never_returned(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    expected = _reference()
    _cached_encode(tmp_path)
    db = sqlite3.connect(tmp_path / "embeddings.sqlite")
    with db:  # flip one float of one stored vector, as a bad sector would
        key, blob = db.execute("SELECT key, vector FROM vectors LIMIT 1").fetchone()
        vector = np.frombuffer(blob, dtype=np.float32).copy()
        vector[7] += 0.5
        db.execute("UPDATE vectors SET vector = ? WHERE key = ?", (vector.tobytes(), key))
    db.close()
    with caplog.at_level(logging.WARNING, logger="embedsearch"):
        np.testing.assert_allclose(_cached_encode(tmp_path), expected, atol=1e-6)
    assert "damaged vector" in caplog.text
