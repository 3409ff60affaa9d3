"""`embedsearch eval` / scripts/evaluate.py: ranking quality on labelled queries.

Each task is scored against the index its definition calls for: `title` queries (a
paper's title) against an index of abstracts only; `tldr` queries (the author's one-line
summary) against title + abstract, with keywords in the lexical index; `keyword` queries
(an author keyword; relevant = every paper tagged with it) against title + abstract with
the keywords left out, as they are the labels themselves (indexing them turns the task
into matching the tag: lexical nDCG@10 0.03 -> 0.64 on the dev data).

Indexes are kept under the work folder, keyed by the corpus file, the limit and the
configuration, and vectors come from the embedding cache, so a second run encodes
nothing. Besides each mode, two baselines are scored side by side: plain BM25 (words
only) and the naive fusion (BM25 and dense scores min-max scaled, 50/50). With
`--milvus URI` the indexes keep their data in Milvus (one collection per task) and the
three modes are scored there; the baselines read local BM25 arrays and are left out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .devset import Query, load_queries
from .engine import SearchEngine
from .metrics import METRICS
from .papers import Paper
from .readers import read_papers
from .storage import Local, LocalView, Milvus, Target

__all__ = ["TASKS", "evaluate", "main"]


@dataclass(frozen=True)
class Task:
    """How one task's index is built: embedded and lexical fields."""

    fields: tuple[str, ...]
    lexical_fields: tuple[str, ...]


TASKS = {
    "title": Task(("abstract",), ("abstract",)),
    "tldr": Task(("title", "abstract"), ("title", "abstract", "keywords")),
    "keyword": Task(("title", "abstract"), ("title", "abstract")),
}
SYSTEMS = ("lexical", "dense", "hybrid", "bm25 words only", "naive fusion")


def _subset(papers: list[Paper], queries: list[Query],
            limit: int | None) -> tuple[list[Paper], list[Query]]:
    if not limit:
        return papers, queries
    kept = papers[:limit]
    ids = {paper.id for paper in kept}
    return kept, [q for q in queries if q.relevant and q.relevant <= ids]


def _index(engine_dir: Path, papers: list[Paper], task: Task, backend: str,
           progress: bool, storage: Target) -> SearchEngine:
    if (engine_dir / "manifest.json").is_file():
        engine = SearchEngine.open(engine_dir)
        if len(engine) == len(papers) and engine.info().storage == storage.settings():
            return engine
        engine.close()
    return SearchEngine.build(engine_dir, papers, fields=task.fields,
                              lexical_fields=task.lexical_fields, backend=backend,
                              overwrite=engine_dir.exists(), progress=progress,
                              storage=storage)


def _baselines(engine: SearchEngine, texts: Sequence[str]) -> dict[str, list[list[str]]]:
    """Plain word BM25, and the naive 50/50 min-max fusion of it with dense search
    (of a local index: the baselines read its BM25 arrays)."""
    view = engine._view
    assert isinstance(view, LocalView)
    parts = view.parts
    vectors = engine._get_encoder().encode_queries(list(texts))
    words, naive = [], []
    for text, vector in zip(texts, vectors):
        scores = parts.lexical._words.scores(parts.lexical.tokenizer.terms(text)[0])
        bm25 = parts.lexical.top(scores, 100)
        dense_scores, dense_keys = parts.vectors.search(vector[None, :], 100)
        pool = np.union1d(bm25[1], dense_keys[0][dense_keys[0] >= 0])
        lexical = scores[parts.lexical.rows(pool)]
        dense = parts.vectors.reconstruct(pool) @ vector

        def scaled(values: np.ndarray) -> np.ndarray:
            low, high = values.min(), values.max()
            return (values - low) / (high - low) if high > low else np.zeros(len(values))

        fused = pool[np.argsort(-(0.5 * scaled(lexical) + 0.5 * scaled(dense)),
                                kind="stable")][:10]
        words.append(_ids(engine, bm25[1][:10]))
        naive.append(_ids(engine, fused))
    return {"bm25 words only": words, "naive fusion": naive}


def _ids(engine: SearchEngine, keys: np.ndarray) -> list[str]:
    papers = engine._view.papers(int(key) for key in keys)
    return [papers[int(key)].id for key in keys]


def _score(rankings: Sequence[Sequence[str]], queries: Sequence[Query]) -> dict[str, float]:
    return {name: float(np.mean([metric(list(r), q.relevant)
                                 for r, q in zip(rankings, queries)]))
            for name, metric in METRICS.items()}


def evaluate(corpus: Path, queries_path: Path, *, limit: int | None = None,
             work: Path = Path("indexes") / "eval", tasks: Sequence[str] = tuple(TASKS),
             backend: str = "auto", progress: bool = False,
             milvus: str | None = None) -> list[dict[str, Any]]:
    """One row per (task, system): the metrics at 10 and how many queries; `milvus`: a
    Milvus URI to keep the indexes' data in (the baselines are then left out)."""
    papers, queries = _subset(read_papers([corpus]), load_queries(queries_path), limit)
    stat = corpus.stat()
    rows = []
    for task_name in tasks:
        task = TASKS[task_name]
        chosen = [q for q in queries if q.task == task_name]
        if not chosen:
            continue
        key = hashlib.sha256(json.dumps([str(corpus.resolve()), stat.st_size, stat.st_mtime_ns,
                                         limit, task.fields, task.lexical_fields, backend]
                                        ).encode()).hexdigest()[:12]
        storage: Target = (Milvus(milvus, f"eval_{task_name}_{key}") if milvus else Local())
        name = f"{task_name}-{key}" + ("-milvus" if milvus else "")
        engine = _index(work / name, papers, task, backend, progress, storage)
        texts = [q.text for q in chosen]
        rankings: dict[str, list[list[str]]] = {}
        for mode in ("lexical", "dense", "hybrid"):
            results = engine.search_many(texts, k=10, mode=mode, evidence=False)
            rankings[mode] = [[hit.paper.id for hit in hits] for hits in results]
        if not milvus:
            rankings.update(_baselines(engine, texts))
        engine.close()
        for system in [name for name in SYSTEMS if name in rankings]:
            rows.append({"task": task_name, "system": system, "queries": len(chosen),
                         **_score(rankings[system], chosen)})
    return rows


def _print(rows: Sequence[dict[str, Any]], papers: int | str) -> None:
    columns = ["task", "system", "queries", *METRICS]
    print(f"Ranking quality at 10 on {papers} papers (embedsearch eval)")
    print("  ".join(f"{c:<16}" if i < 2 else f"{c:>9}" for i, c in enumerate(columns)))
    for row in rows:
        cells = [f"{row['task']:<16}", f"{row['system']:<16}", f"{row['queries']:>9}"]
        cells += [f"{row[m]:>9.3f}" for m in METRICS]
        print("  ".join(cells))


def parser(prog: str = "embedsearch eval") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, required=True, help="papers file, e.g. "
                   "../shared/data/papers/papers.jsonl.gz")
    p.add_argument("--queries", type=Path, required=True,
                   help="labelled queries (JSON lines: qid, task, query, relevant)")
    p.add_argument("--limit", type=int, help="only the first N papers, and the queries "
                                             "whose relevant papers are all among them")
    p.add_argument("--tasks", default=",".join(TASKS), help="comma-separated subset of "
                                                            + ", ".join(TASKS))
    p.add_argument("--work", type=Path, default=Path("indexes") / "eval",
                   help="where the evaluation's indexes are kept (default: %(default)s)")
    p.add_argument("--backend", default="auto", help="encoder backend (default: auto)")
    p.add_argument("--milvus", metavar="URI", help="keep the indexes' data in Milvus (a "
                                                   "Lite file or a server) and score the "
                                                   "three modes there")
    p.add_argument("--json", action="store_true", help="one JSON object per row instead")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    started = time.perf_counter()
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        parser().error(f"--tasks: unknown {', '.join(unknown)} (known: {', '.join(TASKS)})")
    rows = evaluate(args.corpus, args.queries, limit=args.limit, work=args.work, tasks=tasks,
                    backend=args.backend, progress=sys.stderr.isatty(), milvus=args.milvus)
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        _print(rows, args.limit or "all")
        print(f"({time.perf_counter() - started:.0f} s)")
    return 0
