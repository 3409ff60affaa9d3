"""FAISS as this package uses it: typed as Any, plus the ID selector and thread setting
both implementations need.

faiss ships stubs that lack most of its SWIG API (search parameters, selectors,
DirectMap); typing it as Any is more honest than a page of ignores.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import faiss as _faiss
import numpy as np
from numpy.typing import NDArray

from .tuning import search_threads

__all__ = ["faiss", "id_selector", "label_selector", "set_threads", "training_sample",
           "write_index"]

#: Vectors k-means (IVF lists, PQ codebooks) trains on: more adds little quality and
#: costs minutes (k-means over all 1M vectors for 4,000 lists is tens of TFLOP).
TRAIN_SAMPLE = 150_000

faiss: Any = _faiss


def write_index(index: Any, path: Path) -> None:
    """faiss.write_index, with a failed write (a full disk) raised as the OSError it is:
    FAISS reports it as a RuntimeError, which callers would take for a bug."""
    try:
        faiss.write_index(index, str(path))
    except RuntimeError as exc:  # writing to a file, its only failure is the file's
        code = errno.ENOSPC if "No space left" in str(exc) else errno.EIO
        raise OSError(code, f"could not write {path}: {os.strerror(code)}") from None


def set_threads(queries: int | None = None) -> None:
    """Set FAISS's OpenMP threads for the call about to run: every core to train and add,
    `search_threads` for a search of `queries` (one thread for a single query). Both
    implementations set it before each call: the setting is process-wide, and adds and searches
    want different ones."""
    cores = os.cpu_count() or 1
    faiss.omp_set_num_threads(cores if queries is None else search_threads(queries, cores))


def label_selector(labels: NDArray[np.int64]) -> Any:
    """A FAISS IDSelector admitting `labels` (non-negative): a bitmap over 0..max, one
    bit a label, which FAISS tests in a step (a batch selector hashes each candidate);
    it keeps its bitmap alive."""
    size = int(labels.max()) + 1 if len(labels) else 1
    admitted = np.zeros(size, bool)
    admitted[labels] = True
    bits = np.packbits(admitted, bitorder="little")
    selector = faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits))  # n: bytes
    selector.keep = bits
    return selector


def id_selector(allowed: Any | None, exclude: NDArray[np.int64] | None) -> Any:
    """A FAISS IDSelector for the restriction, or None: `allowed` a `label_selector` (or
    None: every label), less the labels `exclude`; it keeps its parts alive."""
    if exclude is None or not len(exclude):
        return allowed
    inner = faiss.IDSelectorBatch(np.ascontiguousarray(exclude, dtype=np.int64))
    selector = faiss.IDSelectorNot(inner)
    selector.keep = (inner, exclude)
    if allowed is None:
        return selector
    both = faiss.IDSelectorAnd(allowed, selector)
    both.keep = (allowed, selector)
    return both


def training_sample(vectors: NDArray[np.float32], size: int = TRAIN_SAMPLE) -> NDArray[np.float32]:
    """At most `size` rows of `vectors`, a fixed random choice in their order."""
    if len(vectors) <= size:
        return vectors
    rows = np.random.default_rng(0).choice(len(vectors), size, replace=False)
    return np.ascontiguousarray(vectors[np.sort(rows)])
