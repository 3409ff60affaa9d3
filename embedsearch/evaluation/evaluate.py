"""`embedsearch eval` / scripts/evaluate.py: each task's index built, every mode and the
two baselines scored, models side by side. What is scored, and the command's options,
are `options`'."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..encoding import Encoder
from ..engine import SearchEngine
from ..papers import Paper, split_sentences
from ..readers import read_papers
from ..storage import IndexOptions, Target, View, parse_target
from ..storage.local import LocalView
from .devset import Query, load_queries
from .metrics import METRICS
from .options import SAMPLE, TASKS, Task

__all__ = ["evaluate", "run", "self_supervised"]

#: Abstracts encoded (cache off) to time each model.
_RATE_TEXTS = 256
SYSTEMS = ("lexical", "dense", "hybrid", "bm25 words only", "naive fusion")


def _subset(papers: list[Paper], queries: list[Query],
            limit: int | None) -> tuple[list[Paper], list[Query]]:
    if not limit:
        return papers, queries
    kept = papers[:limit]
    ids = {paper.id for paper in kept}
    return kept, [q for q in queries if q.relevant and q.relevant <= ids]


def self_supervised(papers: Sequence[Paper], sample: int = SAMPLE,
                    seed: int = 0) -> tuple[list[Paper], list[Query]]:
    """The corpus as indexed, and up to `sample` title queries drawn from it (seeded, so
    every model and run gets the same ones): each query's one relevant paper is the one
    it titles. A paper whose title was derived from its abstract (the bundled sample's)
    is asked for by its first sentence, which is then left out of its indexed abstract,
    as it would otherwise find itself word for word."""
    candidates = [i for i, paper in enumerate(papers) if paper.title
                  and (not paper.title_derived or len(split_sentences(paper.abstract)) > 1)]
    chosen = sorted(random.Random(seed).sample(candidates, min(sample, len(candidates))))
    indexed, queries = list(papers), []
    for i in chosen:
        paper = papers[i]
        text = paper.title
        if paper.title_derived:
            first, *rest = split_sentences(paper.abstract)
            indexed[i] = dataclasses.replace(paper, abstract=" ".join(rest))
            text = first
        queries.append(Query(f"self:{i}", "title", text, frozenset({paper.id})))
    return indexed, queries


def _index(engine_dir: Path, papers: list[Paper], task: Task, backend: str,
           progress: bool, storage: Target, model: str | None) -> SearchEngine:
    if (engine_dir / "manifest.json").is_file():
        engine = SearchEngine.open(engine_dir)
        if len(engine) == len(papers) and engine.info().storage == storage.settings():
            return engine
        engine.close()
    return SearchEngine.build(engine_dir, papers, IndexOptions(fields=task.fields,
                                                               lexical_fields=task.lexical_fields),
                              model=model, backend=backend,
                              overwrite=engine_dir.exists(), progress=progress,
                              storage=storage)


def _encode_rate(model: str | None, backend: str, papers: Sequence[Paper]) -> float:
    """Abstracts a second of this model and backend, the cache off (after a warm-up)."""
    encoder = Encoder(model, backend=backend, cache=False, job_size=len(papers))
    texts = [paper.abstract for paper in papers[:_RATE_TEXTS]]
    encoder.encode_documents(texts[:8])
    start = time.perf_counter()
    encoder.encode_documents(texts)
    return len(texts) / (time.perf_counter() - start)


def _baselines(engine: SearchEngine, texts: Sequence[str]) -> dict[str, list[list[str]]]:
    """Plain word BM25, and the naive 50/50 min-max fusion of it with dense search
    (of a local index: the baselines read its BM25 arrays)."""
    vectors = engine.encoder.encode_queries(list(texts))
    words, naive = [], []
    with engine.snapshot() as view:
        assert isinstance(view, LocalView)
        lexical_search, none = view.lexical_search, np.zeros(0, np.int64)
        for text, vector in zip(texts, vectors):
            scores = lexical_search.scores(text, pair_weight=0.0)
            bm25 = lexical_search.top(scores, 100)
            dense_keys = view.dense(vector, 100, None, none)[1]
            pool = np.union1d(bm25[1], dense_keys)
            lexical = scores[lexical_search.rows(pool)]
            dense = view.vectors(pool) @ vector
            fused = pool[np.argsort(-(0.5 * _scaled(lexical) + 0.5 * _scaled(dense)),
                                    kind="stable")][:10]
            words.append(_ids(view, bm25[1][:10]))
            naive.append(_ids(view, fused))
    return {"bm25 words only": words, "naive fusion": naive}


def _scaled(values: np.ndarray) -> np.ndarray:
    low, high = values.min(), values.max()
    return (values - low) / (high - low) if high > low else np.zeros(len(values))


def _ids(view: View, keys: np.ndarray) -> list[str]:
    papers = view.papers(int(key) for key in keys)
    return [papers[int(key)].id for key in keys]


def _score(rankings: Sequence[Sequence[str]], queries: Sequence[Query]) -> dict[str, float]:
    return {name: float(np.mean([metric(list(r), q.relevant)
                                 for r, q in zip(rankings, queries)]))
            for name, metric in METRICS.items()}


def evaluate(corpus: Path | Sequence[Path], queries_path: Path | None = None, *,
             limit: int | None = None,
             work: Path = Path("indexes") / "eval", tasks: Sequence[str] = tuple(TASKS),
             backend: str = "auto", progress: bool = False, milvus: str | None = None,
             models: Sequence[str | None] = (None,), sample: int = SAMPLE
             ) -> list[dict[str, Any]]:
    """One row per (model, task, system): the metrics at 10, how many queries, the
    model's encode rate (abstracts/s) and index size (bytes). `queries_path` None: the
    corpus's own title queries (`self_supervised`, `sample` of them). `models`:
    None is the bundled model. `milvus`: a Milvus URI to keep the indexes' data in (the
    baselines are then left out)."""
    files = [corpus] if isinstance(corpus, Path) else list(corpus)
    papers = read_papers(files)
    labelled = load_queries(queries_path) if queries_path else None
    papers, queries = _subset(papers, labelled or [], limit)
    if labelled is None:
        papers, queries = self_supervised(papers, sample)
    # The self-supervised corpus differs (sampled papers lose a first sentence): its own key.
    variant = "labelled" if labelled is not None else f"self-supervised:{sample}"
    rows = []
    for model in models:
        rate = _encode_rate(model, backend, papers)
        for task_name in tasks:
            for row in _task_rows(files, papers, queries, task_name, [limit, variant], work,
                                  backend, progress, milvus, model):
                rows.append({"model": model or "bundled", "abstracts/s": rate, **row})
    return rows


def _task_rows(files: list[Path], papers: list[Paper], queries: list[Query], task_name: str,
               subset: list[Any], work: Path, backend: str, progress: bool,
               milvus: str | None, model: str | None) -> list[dict[str, Any]]:
    task = TASKS[task_name]
    chosen = [q for q in queries if q.task == task_name]
    if not chosen:
        return []
    stats = [(str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    key = hashlib.sha256(json.dumps([stats, *subset, task.fields, task.lexical_fields, backend,
                                     model]).encode()).hexdigest()[:12]
    storage = (parse_target(f"milvus:{milvus}", {"collection": f"eval_{task_name}_{key}"})
               if milvus else parse_target("local"))
    name = f"{task_name}-{key}" + ("-milvus" if milvus else "")
    engine = _index(work / name, papers, task, backend, progress, storage, model)
    texts = [q.text for q in chosen]
    rankings: dict[str, list[list[str]]] = {}
    for mode in ("lexical", "dense", "hybrid"):
        results = engine.search_many(texts, k=10, mode=mode, evidence=False)
        rankings[mode] = [[hit.paper.id for hit in hits] for hits in results]
    if not milvus:
        rankings.update(_baselines(engine, texts))
    size = engine.info().bytes
    engine.close()
    return [{"task": task_name, "system": system, "queries": len(chosen),
             "index bytes": size, **_score(rankings[system], chosen)}
            for system in SYSTEMS if system in rankings]


def _print(rows: Sequence[dict[str, Any]], papers: int | str, labelled: bool) -> None:
    """One aligned table: a row per model, task and system, models side by side."""
    source = "labelled queries" if labelled else "self-supervised title queries"
    print(f"Ranking quality at 10 on {papers} papers, {source} (embedsearch eval)")
    header = ["model", "task", "system", "queries", *METRICS, "abstracts/s", "index MB"]
    width = max([len(str(row["model"])) for row in rows] + [5])
    print("  ".join([f"{header[0]:<{width}}", f"{header[1]:<8}", f"{header[2]:<16}"]
                    + [f"{c:>11}" for c in header[3:]]))
    for row in rows:
        cells = [f"{row['model']:<{width}}", f"{row['task']:<8}", f"{row['system']:<16}",
                 f"{row['queries']:>11}"]
        cells += [f"{row[m]:>11.3f}" for m in METRICS]
        cells += [f"{row['abstracts/s']:>11.1f}", f"{row['index bytes'] / 1e6:>11.1f}"]
        print("  ".join(cells))


def run(args: argparse.Namespace) -> int:
    """`embedsearch eval` with its parsed options (`options.add_arguments`): the table,
    or a JSON object per row."""
    started = time.perf_counter()
    rows = evaluate(args.corpus, args.queries, limit=args.limit, work=args.work,
                    tasks=args.tasks, backend=args.backend, progress=sys.stderr.isatty(),
                    milvus=args.milvus, models=args.models or [None], sample=args.sample)
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        _print(rows, args.limit or "all", labelled=args.queries is not None)
        print(f"({time.perf_counter() - started:.0f} s)")
    return 0
