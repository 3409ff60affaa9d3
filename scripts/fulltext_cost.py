#!/usr/bin/env python3
"""What full text costs a query and the disk: 79.5k abstracts alone against the same plus
papers read in full, side by side in one run.

The full-text papers are made from the dev corpus: each of `--hosts` papers (default
1,000) gets `--passages` passages (default 40, about a 12-page paper in windows of 100
words), whose texts are other dev papers' abstracts and whose vectors are those papers'
stored embeddings plus a little noise (as the scale benchmark makes its vectors), so
nothing is encoded and the passages are as varied as real text. Both indexes are built
from stored vectors; then the dev queries (odd ids) are asked of each, warm, in hybrid,
dense and lexical mode with query encoding, and the medians and their ratio printed,
with each index's size and the passages' share.

    python scripts/fulltext_cost.py --dev-dir ../shared/data/papers --work /tmp/ft-cost
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from embedsearch import Paper, SearchEngine
from embedsearch.evaluation.devset import DevSet, default_dev_dir
from embedsearch.papers import Passage

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_query_timing import median_ms  # noqa: E402

MODES = ("hybrid", "dense", "lexical")


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def full_text_papers(devset: DevSet, vectors: np.ndarray, hosts: int, passages: int,
                     seed: int = 0) -> tuple[list[Paper], np.ndarray, np.ndarray, list[int]]:
    """The corpus with `hosts` papers given bodies: (papers, paper vectors, passage
    vectors, the rows of the hosts)."""
    rng = np.random.default_rng(seed)
    papers = list(devset.papers)
    chosen = rng.choice(len(papers), hosts, replace=False)
    donors = rng.integers(0, len(papers), (hosts, passages))
    rows = []
    for host, row in zip(chosen.tolist(), donors):
        body = tuple(Passage(papers[d].abstract, page=1 + i // 4, section=f"{1 + i // 8} Part")
                     for i, d in enumerate(row.tolist()))
        papers[host] = Paper(**{**_fields(papers[host]), "passages": body})
        rows.append(row)
    # Passage vectors follow the papers' order (`passage_rows`): hosts in row order.
    order = np.argsort(chosen)
    noisy = vectors[np.concatenate([rows[i] for i in order])].astype(np.float32)
    noisy += rng.normal(0, 0.02, noisy.shape).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    return papers, vectors, noisy, sorted(chosen.tolist())


def _fields(paper: Paper) -> dict[str, Any]:
    return {name: getattr(paper, name) for name in paper.__dataclass_fields__}


def size_mb(folder: Path, part: str | None = None) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()
               and (part is None or part in path.parts)) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev-dir", type=Path, default=default_dev_dir())
    parser.add_argument("--work", type=Path, required=True, help="a folder for both indexes")
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--passages", type=int, default=40)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    devset = DevSet(args.dev_dir)
    vectors = devset.stored_vectors()
    if vectors is None:
        raise SystemExit(f"no stored embeddings in {args.dev_dir}")
    odd = [query for query in devset.queries if int(re.findall(r"\d+", query.qid)[-1]) % 2]
    # Every task in turn (title, tldr, keyword queries), not the first task's alone.
    tasks = sorted({query.task for query in odd})
    queries = [query.text for turn in itertools.zip_longest(
        *[[q for q in odd if q.task == task] for task in tasks]) for query in turn if query]
    queries = queries[:args.queries]
    plain, full = args.work / "abstracts", args.work / "fulltext"
    if not plain.exists():
        SearchEngine.build(plain, devset.papers, vectors=vectors).close()
    if not full.exists():
        papers, own, passage_vectors, _ = full_text_papers(devset, vectors, args.hosts,
                                                           args.passages)
        start = time.perf_counter()
        SearchEngine.build(full, papers, vectors=own, passage_vectors=passage_vectors).close()
        print(f"built the full-text index in {time.perf_counter() - start:.0f} s")
    print(f"{cpu_name()}, {os.cpu_count()} cores; {len(queries)} dev queries (odd ids), "
          f"k=10, warm, with query encoding")
    print(f"abstracts alone: {size_mb(plain):.0f} MB; with {args.hosts} full-text papers of "
          f"{args.passages} passages: {size_mb(full):.0f} MB, of it passages "
          f"{size_mb(full, 'passages'):.0f} MB "
          f"({size_mb(full, 'passages') / args.hosts * 100:.1f} MB per 100 papers)")
    print("| mode | abstracts p50 ms | with full text p50 ms | ratio |\n|---|---|---|---|")
    with SearchEngine.open(plain) as a, SearchEngine.open(full) as b:
        for mode in MODES:
            # Interleaved rounds, medians of each: the machine's noise falls on both.
            first = [median_ms(a, queries, mode, 5), median_ms(b, queries, mode, 5)]
            second = [median_ms(a, queries, mode, 5), median_ms(b, queries, mode, 5)]
            left, right = min(first[0], second[0]), min(first[1], second[1])
            print(f"| {mode} | {left:.1f} | {right:.1f} | {right / left:.2f}x |")


if __name__ == "__main__":
    main()
