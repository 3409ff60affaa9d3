"""The same dev index in local files and in a Milvus Lite collection, side by side.

Both are built from the stored embeddings (title + abstract), so they rank the same
vectors: quality (MRR@10 and Recall@10 of the tldr and keyword queries, whose relevant
papers are judged on title + abstract; the title task needs an abstract-only index) in
each mode, warm latency of each mode (queries alternate between the two indexes, so
drift hits both alike), and how a filter that few papers pass fares: its recall@10
against an exact search of the passing papers. The build time of each is reported too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..engine import SearchEngine
from ..evaluation.devset import DevSet, Query
from ..evaluation.metrics import mrr, recall
from ..filters import Filters
from ..storage.exact import exact_search
from ..storage.milvus import Milvus
from .report import Table

__all__ = ["milvus_table"]

_MODES = ("dense", "lexical", "hybrid")
_TASKS = ("tldr", "keyword")


def _subset(devset: DevSet, count: int | None, limit: int) -> tuple[list[int], list[Query]]:
    """Rows of the papers to index and the queries to ask: up to `limit` tldr + keyword
    queries and, for a `count` below the corpus, the papers relevant to as many of them as
    half of `count` holds, then the corpus in order up to `count`."""
    chosen = _queries(devset, limit)
    total = len(devset.papers)
    if not count or count >= total:
        return list(range(total)), chosen
    row = {paper.id: i for i, paper in enumerate(devset.papers)}
    rows: set[int] = set()
    kept = []
    for query in chosen:
        needed = {row[i] for i in query.relevant if i in row}
        if len(needed) == len(query.relevant) and len(rows | needed) <= count // 2:
            rows |= needed
            kept.append(query)
    filler = (i for i in range(total) if i not in rows)
    while len(rows) < count:
        rows.add(next(filler))
    return sorted(rows), kept


def _queries(devset: DevSet, limit: int) -> list[Query]:
    per_task = max(1, limit // len(_TASKS))
    return [q for task in _TASKS
            for q in [q for q in devset.queries if q.task == task and q.relevant][:per_task]]


def _build(devset: DevSet, folder: Path, kind: str, rows: list[int]) -> tuple[SearchEngine,
                                                                            float]:
    vectors = devset.stored_vectors()
    if vectors is None:
        raise FileNotFoundError(f"no stored embeddings in {devset.folder}")
    papers = [devset.papers[i] for i in rows]
    target = None if kind == "local" else Milvus(str(folder / "papers.db"), "bench")
    began = time.perf_counter()
    engine = SearchEngine.build(folder / f"{kind}-index", papers, vectors=vectors[rows],
                                storage=target)
    return engine, time.perf_counter() - began


def _timed(engine: SearchEngine, text: str, mode: str,
           filters: Filters | None = None) -> tuple[list[str], float]:
    began = time.perf_counter()
    hits = engine.search(text, k=10, mode=mode, filters=filters, evidence=False)
    return [hit.paper.id for hit in hits], time.perf_counter() - began


def _narrow_filter(engine: SearchEngine) -> tuple[Filters, list[int]]:
    """A venue and year that about 1% of the papers share: where filtered HNSW is weakest."""
    with engine.snapshot() as view:
        keys = view.keys()
        papers = view.papers(keys)
    counts: dict[tuple[str, int], list[int]] = {}
    for key in keys:
        paper = papers[int(key)]
        if paper.venue and paper.year:
            counts.setdefault((paper.venue, paper.year), []).append(int(key))
    target = 0.01 * len(keys)
    (venue, year), passing = min(counts.items(), key=lambda item: abs(len(item[1]) - target))
    return Filters.parse(year=str(year), venues=[venue]), passing


def milvus_table(devset: DevSet, folder: Path, count: int | None, queries: int) -> Table:
    """Quality, latency and filtered recall of the same index in both storages."""
    indexed, chosen = _subset(devset, count, queries)
    engines, builds = {}, {}
    for kind in ("local", "milvus"):
        engines[kind], builds[kind] = _build(devset, folder, kind, indexed)
    local = engines["local"]
    filters, passing = _narrow_filter(local)
    table = Table(f"Local files vs Milvus Lite, {len(indexed):,} dev papers "
                  f"({len(chosen)} tldr + keyword queries)",
                  ["storage", "mode", "MRR@10", "Recall@10", "p50 ms", "p99 ms", "build s"],
                  note=f"filter {filters.venues[0]} {filters.year_min}: {len(passing)} papers "
                       "pass")
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for mode in _MODES:
        found: dict[str, list[list[str]]] = {kind: [] for kind in engines}
        seconds: dict[str, list[float]] = {kind: [] for kind in engines}
        for query in chosen:
            for kind, engine in engines.items():  # alternate: drift hits both alike
                ranked, took = _timed(engine, query.text, mode)
                found[kind].append(ranked)
                seconds[kind].append(took)
        for kind in engines:
            rows[(kind, mode)] = _row(kind, mode, found[kind], seconds[kind], chosen,
                                      builds[kind])
    for kind in engines:
        for mode in _MODES:
            table.add(**rows[(kind, mode)])
        table.add(**_filtered_row(kind, engines[kind], local, chosen, filters, passing))
    for engine in engines.values():
        engine.close()
    return table


def _row(kind: str, mode: str, found: Sequence[list[str]], seconds: Sequence[float],
         queries: Sequence[Query], build: float) -> dict[str, Any]:
    return {"storage": kind, "mode": mode,
            "MRR@10": float(np.mean([mrr(r, q.relevant) for r, q in zip(found, queries)])),
            "Recall@10": float(np.mean([recall(r, q.relevant)
                                        for r, q in zip(found, queries)])),
            "p50 ms": float(np.percentile(seconds, 50) * 1000),
            "p99 ms": float(np.percentile(seconds, 99) * 1000), "build s": build}


def _filtered_row(kind: str, engine: SearchEngine, local: SearchEngine,
                  queries: Sequence[Query], filters: Filters,
                  passing: list[int]) -> dict[str, Any]:
    """Dense search under the narrow filter: recall@10 against exact search of the papers
    that pass (in the "Recall@10" column), and its latency."""
    allowed = np.array(sorted(passing), dtype=np.int64)
    with local.snapshot() as view:
        vectors = view.vectors(allowed)
        papers = view.papers(allowed)
    texts = [q.text for q in queries]
    encoded = local.encoder.encode_queries(texts)
    recalls, seconds = [], []
    for text, vector in zip(texts, encoded):
        _, keys = exact_search(vectors, allowed, vector[None, :], 10)
        truth = {papers[int(key)].id for key in keys[0] if key >= 0}
        ranked, took = _timed(engine, text, "dense", filters)
        recalls.append(len(truth & set(ranked)) / max(1, len(truth)))
        seconds.append(took)
    return {"storage": kind, "mode": "dense, filtered", "MRR@10": "-",
            "Recall@10": float(np.mean(recalls)),
            "p50 ms": float(np.percentile(seconds, 50) * 1000),
            "p99 ms": float(np.percentile(seconds, 99) * 1000), "build s": "-"}
