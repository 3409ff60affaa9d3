"""Warm query latency end to end (encode + search + metadata) and batch throughput.

The index holds the dev corpus with its stored embeddings (the bundled model, torch
float32, stored as float16), recorded under the default backend: that backend's vectors
agree with them to a cosine of 0.997-0.9999 (int8 or float backends), so search behaves
as on an index it encoded, without 30 minutes of encoding. Queries are the dev queries' texts.

Each pipeline is timed in a fresh process that holds only what it needs: in the process
that had just built the index (and held the 79.5k dev papers), the same queries took
10.6 ms at p50 against 8.1 ms in a process of their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..encoding import resolve_model
from ..encoding.models import offline_hub
from ..engine import SearchEngine
from ..evaluation.devset import DevSet
from .report import Table

__all__ = ["build_stored_index", "latency_table"]

_T = TypeVar("_T")


def build_stored_index(devset: DevSet, out: Path, count: int | None = None) -> SearchEngine:
    """An index of the first `count` dev papers from their stored embeddings."""
    vectors = devset.stored_vectors()
    if vectors is None:
        raise FileNotFoundError(f"no stored embeddings in {devset.folder}")
    papers = devset.papers[:count] if count else devset.papers
    return SearchEngine.build(out, papers, vectors=vectors[: len(papers)])


def _percentiles(seconds: Sequence[float]) -> tuple[float, float]:
    return float(np.percentile(seconds, 50) * 1000), float(np.percentile(seconds, 99) * 1000)


def _in_fresh_process(function: Callable[..., _T], *args: Any) -> _T:
    """function(*args) in a newly started interpreter (see the module's docstring)."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def _naive(index_dir: Path, queries: Sequence[str]) -> list[float]:
    """Per-query seconds of plain ST encode + IndexFlatIP over the index's vectors."""
    offline_hub()
    import faiss
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    with SearchEngine.open(index_dir) as engine, engine.snapshot() as view:
        keys = view.keys()
        vectors = view.vectors(keys)
        papers = view.papers(int(key) for key in keys)
        titles = [papers[int(key)].title for key in keys]
    model = SentenceTransformer(str(resolve_model().path), device="cpu")
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    # One FAISS thread, as the engine uses: with torch's and FAISS' OpenMP threads both on
    # two cores a single query took 36 ms instead of 17, a trap, not the naive pipeline.
    faiss.omp_set_num_threads(1)
    timings = []
    for query in [*queries[:5], *queries]:
        start = time.perf_counter()
        vector = model.encode([query], normalize_embeddings=True)
        _, found = index.search(np.asarray(vector, np.float32), 10)
        _ = [titles[i] for i in found[0]]
        timings.append(time.perf_counter() - start)
    return timings[5:]


def _engine(index_dir: Path, queries: Sequence[str]) -> tuple[list[float], float]:
    """Per-query seconds of `SearchEngine.search`, and queries/s of one `search_many`."""
    with SearchEngine.open(index_dir) as engine:
        for text in queries[:5]:
            engine.search(text, k=10)
        timings = []
        for text in queries:
            start = time.perf_counter()
            engine.search(text, k=10)
            timings.append(time.perf_counter() - start)
        start = time.perf_counter()
        engine.search_many(queries, k=10)
        return timings, len(queries) / (time.perf_counter() - start)


def latency_table(devset: DevSet, index_dir: Path, queries: int) -> Table:
    texts = [q.text for q in devset.queries][:queries]
    with SearchEngine.open(index_dir) as engine:
        info = engine.info()
    table = Table(f"Warm queries on {info.count} papers ({info.index_type} index)",
                  ["pipeline", "p50 ms", "p99 ms", "x faster p50", "batch queries/s"],
                  f"{len(texts)} dev queries, one at a time after a warm-up, each pipeline "
                  "in a fresh process; batch: all at once (search_many).")
    timings, batch = _in_fresh_process(_engine, index_dir, texts)
    naive_p50, naive_p99 = _percentiles(_in_fresh_process(_naive, index_dir, texts))
    p50, p99 = _percentiles(timings)
    table.add(pipeline="naive (ST encode + IndexFlatIP)", **{"p50 ms": naive_p50,
              "p99 ms": naive_p99, "x faster p50": 1.0, "batch queries/s": ""})
    table.add(pipeline=f"embedsearch ({info.encoder_backend}, {info.index_type})",
              **{"p50 ms": p50, "p99 ms": p99, "x faster p50": naive_p50 / p50,
                 "batch queries/s": batch})
    return table
