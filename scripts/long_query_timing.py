#!/usr/bin/env python3
"""How long a long query takes: median milliseconds of one search by query length.

A query may be as long as `retrieval.MAX_QUERY_CHARS` (20,000 characters, a pasted
title and abstract). The encoder reads its first 256 tokens whatever its length; BM25
and the evidence read all of it, so their cost grows with its words. This times a
search (encoding, ranking, papers and evidence, in process) for queries of 100 to
20,000 characters, in lexical and hybrid mode, on an index given by its folder, or on
the dev corpus built from its stored embeddings (a minute or two, once) when the
folder does not exist yet. Queries are the titles and abstracts of the dev papers
at odd lines, joined and cut to each length.

    python scripts/long_query_timing.py --index indexes/iclr2025
    python scripts/long_query_timing.py --index /tmp/dev-index --dev-dir ../shared/data/papers
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from embedsearch import SearchEngine
from embedsearch.benchmark.latency import build_stored_index
from embedsearch.evaluation.devset import DevSet, default_dev_dir
from embedsearch.search.retrieval import MAX_QUERY_CHARS

LENGTHS = (100, 1_000, 5_000, MAX_QUERY_CHARS)
MODES = ("lexical", "hybrid")


def queries(devset: DevSet, length: int, count: int) -> list[str]:
    """`count` real texts of `length` characters, each from other dev papers."""
    texts = [f"{paper.title}. {paper.abstract}" for paper in devset.papers[1::2]]
    out, at = [], 0
    for _ in range(count):
        text = ""
        while len(text) < length:
            text, at = f"{text} {texts[at % len(texts)]}".strip(), at + 1
        out.append(text[:length])
    return out


def median_ms(engine: SearchEngine, texts: list[str], mode: str, warm: int = 1) -> float:
    """Median milliseconds of one search (k=10) of each of `texts`, after the first
    `warm` of them were searched once untimed (the model, the postings loaded)."""
    for text in texts[:warm]:
        engine.search(text, k=10, mode=mode)
    seconds = []
    for text in texts:
        start = time.perf_counter()
        engine.search(text, k=10, mode=mode)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, required=True,
                        help="an index folder; built from the dev corpus if it does not exist")
    parser.add_argument("--dev-dir", type=Path, default=default_dev_dir())
    parser.add_argument("--queries", type=int, default=9, help="queries per length")
    args = parser.parse_args()
    devset = DevSet(args.dev_dir)
    if not args.index.exists():
        build_stored_index(devset, args.index).close()
    with SearchEngine.open(args.index) as engine:
        print(f"{len(engine):,} papers; median ms of a search (k=10, with evidence) "
              f"over {args.queries} queries")
        print(f"{'characters':>10} " + " ".join(f"{mode:>8}" for mode in MODES))
        for length in LENGTHS:
            texts = queries(devset, length, args.queries)
            print(f"{length:>10,} " + " ".join(f"{median_ms(engine, texts, mode):8.1f}"
                                               for mode in MODES))


if __name__ == "__main__":
    main()
