"""Every index type at scale: build time, memory a vector, recall@10 against exact, latency.

The corpus is the dev corpus' stored embeddings plus noisy copies: each added vector is
a random dev paper's vector plus Gaussian noise of norm ~0.5, renormalised (cosine ~0.89
to its source, about as close as near-duplicate papers are), until `count` vectors.
Queries are dev query texts encoded by the default backend; the truth is exact search.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..encoding import Encoder
from ..evaluation.devset import DevSet
from ..storage.local.vectors import create_index
from ..storage.local.vectors.faisslib import faiss
from ..storage.local.vectors.tuning import estimate_bytes
from .report import Table

__all__ = ["noisy_corpus", "scale_table"]

_NOISE = 0.5


def noisy_corpus(base: np.ndarray, count: int, seed: int = 0,
                 out: np.ndarray | None = None, cyclic: bool = False) -> np.ndarray:
    """`base` extended to `count` rows by noisy copies of random rows (see module doc),
    written into `out` when given (a memory map: the corpus need not fit in memory).

    `cyclic`: row r copies row r % len(base) instead, so that papers replicated in turn
    get vectors near their own (a random row's vector made a replica's hits share no
    word with its text, and 79% of dense queries then took the slow, encoded evidence
    against 6% of the same queries on the dev papers alone)."""
    if count <= len(base) and out is None:
        return np.ascontiguousarray(base[:count])
    rng = np.random.default_rng(seed)
    out = np.empty((count, base.shape[1]), dtype=np.float32) if out is None else out
    out[: min(count, len(base))] = base[:count]
    for start in range(len(base), count, 100_000):
        stop = min(count, start + 100_000)
        rows = (np.arange(start, stop) % len(base) if cyclic
                else rng.integers(0, len(base), stop - start))
        block = base[rows]
        block = block + rng.standard_normal(block.shape, dtype=np.float32) * (
            _NOISE / np.sqrt(base.shape[1]))
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def _memory(index: object, kind: str, count: int, dim: int) -> float:
    measure = getattr(index, "memory_bytes", None)
    if measure is not None:
        return float(measure()) / count
    return estimate_bytes(kind, count, dim) / count


def scale_table(devset: DevSet, count: int, kinds: Sequence[str], queries: int) -> Table:
    base = devset.stored_vectors()
    if base is None:
        raise FileNotFoundError(f"no stored embeddings in {devset.folder}")
    corpus = noisy_corpus(base, count)
    texts = [q.text for q in devset.queries][:queries]
    query_vectors = Encoder(cache=False).encode_queries(texts)
    keys = np.arange(len(corpus), dtype=np.int64)
    faiss.omp_set_num_threads(2)
    truth = faiss.knn(query_vectors, corpus, 10, metric=faiss.METRIC_INNER_PRODUCT)[1]
    table = Table(f"Index types at {count:,} vectors ({len(texts)} queries, k=10)",
                  ["index", "params", "build s", "bytes/vector", "recall@10", "p50 ms",
                   "p99 ms"],
                  "Build on 2 cores; search single-threaded, one query at a time.")
    for kind in kinds:
        index = create_index(kind, corpus.shape[1], count)
        start = time.perf_counter()
        index.add(keys, corpus)
        built = time.perf_counter() - start
        timings, found = [], np.zeros((len(texts), 10), dtype=np.int64)
        for row in range(len(texts)):
            began = time.perf_counter()
            _, found[row : row + 1] = index.search(query_vectors[row : row + 1], 10)
            timings.append(time.perf_counter() - began)
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth)])
        params = {k: v for k, v in index.params.items() if k != "factory"}
        table.add(index=kind, params=" ".join(f"{k}={v}" for k, v in params.items()),
                  **{"build s": built, "bytes/vector": _memory(index, kind, count,
                                                                corpus.shape[1]),
                     "recall@10": float(recall), "p50 ms": float(np.median(timings) * 1000),
                     "p99 ms": float(np.percentile(timings, 99) * 1000)})
        del index
    return table
