"""Recommendations from a large library: each way of ranking (`recommending.METHODS`)
with 1,000 example papers of the index, warm, over the dev corpus.

The examples are what the page's Recommended list sends for a library of starred
papers (ids of the index's papers, their stored vectors used): the first of every 79
dev papers, so they span the corpus's topics as a large bibliography does. Each method
is timed end to end (`SearchEngine.similar`, k=20, evidence included) after one warm-up
call, in turns, and the median of the runs is reported. Target (issue 31): 1 s.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from ..engine import SearchEngine
from ..evaluation.devset import DevSet
from ..similar.recommending import METHODS
from .report import Table

__all__ = ["recommendations_table"]


def recommendations_table(devset: DevSet, index_dir: Path, examples: int = 1000,
                          runs: int = 5) -> Table:
    """Warm seconds of `similar` from `examples` papers, per method."""
    table = Table(f"Recommendations from {examples:,} examples, warm",
                  ["method", "median s", "min s", "max s"],
                  f"k=20, over the {index_dir.name} index; median of {runs} runs")
    with SearchEngine.open(index_dir) as engine:
        with engine.snapshot() as view:
            keys = view.keys()
            step = max(1, len(keys) // examples)
            chosen = view.papers(int(key) for key in keys[::step][:examples])
        ids = [paper.id for paper in chosen.values()]
        timings: dict[str, list[float]] = {method: [] for method in METHODS}
        for method in METHODS:
            engine.similar(ids, k=20, method=method)  # warm: clustering code, FAISS
        for _ in range(runs):
            for method in METHODS:
                start = time.perf_counter()
                engine.similar(ids, k=20, method=method)
                timings[method].append(time.perf_counter() - start)
        for method, seconds in timings.items():
            table.add(method=method, **{"median s": statistics.median(seconds),
                                        "min s": min(seconds), "max s": max(seconds)})
    table.note += f"; {len(ids)} examples, every {step}th paper"
    return table
