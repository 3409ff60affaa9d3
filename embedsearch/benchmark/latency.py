"""Warm query latency end to end (encode + search + metadata) and batch throughput.

The index holds the dev corpus with its stored embeddings (the bundled model, torch
float32, stored as float16), recorded under the default backend: that backend's vectors
agree with them to a cosine of 0.997-0.9999 (int8 or float backends), so search behaves
as on an index it encoded, without 30 minutes of encoding. Queries are the dev queries' texts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..devset import DevSet
from ..encoding import resolve_model
from ..engine import SearchEngine
from .report import Table

__all__ = ["build_stored_index", "latency_table"]


def build_stored_index(devset: DevSet, out: Path, count: int | None = None) -> SearchEngine:
    """An index of the first `count` dev papers from their stored embeddings."""
    vectors = devset.stored_vectors()
    if vectors is None:
        raise FileNotFoundError(f"no stored embeddings in {devset.folder}")
    papers = devset.papers[:count] if count else devset.papers
    return SearchEngine.build(out, papers, vectors=vectors[: len(papers)])


def _percentiles(seconds: Sequence[float]) -> tuple[float, float]:
    return float(np.percentile(seconds, 50) * 1000), float(np.percentile(seconds, 99) * 1000)


def _naive(papers_vectors: np.ndarray, titles: Sequence[str], queries: Sequence[str]
           ) -> list[float]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import faiss
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    model = SentenceTransformer(str(resolve_model().path), device="cpu")
    index = faiss.IndexFlatIP(papers_vectors.shape[1])
    index.add(papers_vectors)
    timings = []
    for query in queries:
        start = time.perf_counter()
        vector = model.encode([query], normalize_embeddings=True)
        _, found = index.search(np.asarray(vector, np.float32), 10)
        _ = [titles[i] for i in found[0]]
        timings.append(time.perf_counter() - start)
    return timings


def latency_table(devset: DevSet, index_dir: Path, queries: int) -> Table:
    engine = SearchEngine.open(index_dir)
    texts = [q.text for q in devset.queries][:queries]
    info = engine.info()
    table = Table(f"Warm queries on {info.count} papers ({info.index_type} index)",
                  ["pipeline", "p50 ms", "p99 ms", "x faster p50", "batch queries/s"],
                  f"{len(texts)} dev queries, one at a time after a warm-up; batch: all at "
                  "once (search_many).")
    for text in texts[:5]:
        engine.search(text, k=10)
    timings = []
    for text in texts:
        start = time.perf_counter()
        engine.search(text, k=10)
        timings.append(time.perf_counter() - start)
    start = time.perf_counter()
    engine.search_many(texts, k=10)
    batch = len(texts) / (time.perf_counter() - start)
    vectors = engine._parts.vectors.reconstruct(engine._parts.vectors.keys())
    titles = [p.title for p in devset.papers[: len(vectors)]]
    naive = _naive(vectors, titles, texts[:5] + texts)[5:]
    naive_p50, naive_p99 = _percentiles(naive)
    p50, p99 = _percentiles(timings)
    table.add(pipeline="naive (ST encode + IndexFlatIP)", **{"p50 ms": naive_p50,
              "p99 ms": naive_p99, "x faster p50": 1.0, "batch queries/s": ""})
    table.add(pipeline=f"embedsearch ({info.encoder_backend}, {info.index_type})",
              **{"p50 ms": p50, "p99 ms": p99, "x faster p50": naive_p50 / p50,
                 "batch queries/s": batch})
    return table
