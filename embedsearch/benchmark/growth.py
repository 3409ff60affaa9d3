"""An index grown by small writes against the same papers built at once, and what an add
costs at a million papers.

`growth_table`: an index of N dev papers grown by `adds` single-paper adds (whatever
segments the merge policy leaves) and one built at once from the same N + `adds`
papers answer the same dev queries (the even ones), interleaved, warm: the p50 and p95
of a hybrid query each, and their ratio. Then a second engine that has read the grown
index measures how long `refresh` takes to serve a 100-paper add another engine just
published: the time a server takes to see it. Last, every added paper is found, removed
ones are gone, and `check` is clean.

`million_table`: `add` of 100 papers, a process of its own, at a million papers against
the dev corpus' size. The million are the dev papers replicated under new ids, their
vectors the dev embeddings plus small noise (sigma 0.01 a dimension, renormalised); the
index is exact (flat), as the add's cost does not depend on the big segment's type and
a 1M HNSW graph takes some 4 minutes to build here.
"""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..engine import SearchEngine
from ..evaluation.devset import DevSet
from ..papers import DEFAULT_FIELDS, Paper
from ..storage import IndexOptions
from .report import Table
from .writes import BACKEND, ProcessCost, measure_command, seed_cache, write_new_papers

__all__ = ["growth_table", "million_table"]

_MB = 1e6


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _build(path: Path, papers: Sequence[Paper], vectors: NDArray[np.float32], cache: Path,
           index_type: str = "auto", progress: bool = False) -> SearchEngine:
    return SearchEngine.build(path, papers, IndexOptions(index_type, fields=DEFAULT_FIELDS),
                              vectors=vectors, backend=BACKEND, cache_dir=cache,
                              progress=progress)


def growth_table(devset: DevSet, size: int, adds: int = 30, queries: int = 200,
                 refreshes: int = 3) -> Table:
    """Query latency after `adds` single-paper adds to an index of `size` papers (0: the
    corpus but the added ones) against one build; a reader's refresh after an add."""
    papers, stored = devset.papers, devset.stored_vectors()
    if stored is None:
        raise FileNotFoundError(f"no stored embeddings in {devset.folder}")
    extra = adds + 100 * refreshes
    size = min(size or len(papers), len(papers) - extra)
    texts = [query.text for query in devset.queries[::2][:queries]]
    table = Table(f"An index of {size} papers grown by {adds} single-paper adds, against "
                  "one build", ["measure", "built at once", "grown", "grown / built"],
                  f"Warm hybrid queries, {len(texts)} even dev queries interleaved, one "
                  "process. Refresh: a reader that has read the grown index serves a "
                  "100-paper add another engine just published (median of "
                  f"{refreshes}).")
    with tempfile.TemporaryDirectory(prefix="embedsearch-bench-growth-") as temp:
        folder, cache = Path(temp), Path(temp) / "cache"
        fresh = _build(folder / "built", papers[:size + adds], stored[:size + adds], cache)
        grown = _build(folder / "grown", papers[:size], stored[:size], cache)
        seed_cache(grown.encoder, papers[size:size + extra], stored[size:size + extra])
        for paper in papers[size:size + adds]:
            grown.add([paper])
        timings: dict[str, list[float]] = {"built": [], "grown": []}
        for text in texts:  # warm: the model, the titles, the page cache
            fresh.search(text, k=10), grown.search(text, k=10)
        for text in texts:
            for name, engine in (("built", fresh), ("grown", grown)):
                began = time.perf_counter()
                engine.search(text, k=10)
                timings[name].append(1e3 * (time.perf_counter() - began))
        for label, share in (("hybrid query p50 ms", 0.5), ("hybrid query p95 ms", 0.95)):
            built, ours = (_percentile(timings[n], share) for n in ("built", "grown"))
            table.add(measure=label, **{"built at once": built, "grown": ours,
                                        "grown / built": ours / built})
        table.add(measure="segments", **{"built at once": fresh.info().segments,
                                         "grown": grown.info().segments})
        table.add(measure="refresh after a 100-paper add, ms", grown=_refresh_ms(
            folder / "grown", grown, papers[size + adds:size + extra], texts[0]))
        _check_grown(grown, papers[size:size + adds], papers[:5])
        fresh.close()
        grown.close()
    return table


def _refresh_ms(index: Path, writer: SearchEngine, new: Sequence[Paper], text: str) -> float:
    """Median ms a reader's `refresh` takes to serve a 100-paper add of `writer`."""
    took = []
    with SearchEngine.open(index, cache_dir=None) as reader:
        reader.search(text, k=3)  # holds a view now, as a server does
        for start in range(0, len(new), 100):
            writer.add(new[start:start + 100])
            began = time.perf_counter()
            if not reader.refresh():
                raise RuntimeError("the reader did not see the add")
            took.append(1e3 * (time.perf_counter() - began))
            if len(reader) != len(writer):
                raise RuntimeError("the reader serves another count than the writer")
    return statistics.median(took)


def _check_grown(grown: SearchEngine, added: Sequence[Paper], removed: Sequence[Paper]) -> None:
    """Every added paper is there, the removed ones gone, the index whole."""
    missing = [paper.id for paper in added if paper.id not in grown]
    grown.remove([paper.id for paper in removed] + [added[0].id])
    left = [paper.id for paper in [*removed, added[0]] if paper.id in grown]
    report = grown.check()
    if missing or left or not report.whole:
        raise RuntimeError(f"grown index: missing {missing}, not removed {left}, "
                           f"problems {report.problems}")


def _replicated(papers: Sequence[Paper], vectors: NDArray[np.float32], count: int,
                seed: int = 0) -> tuple[list[Paper], NDArray[np.float32]]:
    """`count` papers: `papers` repeated under new ids, vectors with noise added."""
    rng = np.random.default_rng(seed)
    rows = np.arange(count) % len(papers)
    copies = [paper if n < len(papers) else
              dataclasses.replace(paper, id=f"{paper.id}~{n // len(papers)}")
              for n, paper in ((n, papers[int(row)]) for n, row in enumerate(rows))]
    noisy = vectors[rows] + rng.normal(0, 0.01, (count, vectors.shape[1])).astype(np.float32)
    noisy[:len(papers)] = vectors[:min(len(papers), count)]
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    return copies, noisy


def million_table(devset: DevSet, count: int = 1_000_000, added: int = 100,
                  runs: int = 3) -> Table:
    """`add` of `added` papers at the dev corpus' size and at `count` papers."""
    papers, stored = devset.papers, devset.stored_vectors()
    if stored is None:
        raise FileNotFoundError(f"no stored embeddings in {devset.folder}")
    base = len(papers) - added * runs
    sizes = [base, count]
    table = Table(f"add of {added} papers at {base} and {count} papers",
                  ["index papers", "median s", "MB written", "peak MB"],
                  f"Median of {runs} processes each, the sizes in turns. The {count} are "
                  "the dev papers "
                  "replicated under new ids, vectors the dev embeddings plus noise (sigma "
                  "0.01), in an exact (flat) index; the new papers' vectors are cached.")
    new = papers[base:]
    with tempfile.TemporaryDirectory(prefix="embedsearch-bench-million-") as temp:
        folder, cache = Path(temp), Path(temp) / "cache"
        files = []
        for run in range(runs):
            files.append(folder / f"new-{run}.jsonl")
            write_new_papers(new[run * added:(run + 1) * added], files[-1])
        costs: dict[int, list[ProcessCost]] = {size: [] for size in sizes}
        for size in sizes:
            chosen, vectors = _replicated(papers[:base], stored[:base], size)
            with _build(folder / f"i{size}", chosen, vectors, cache, index_type="flat",
                        progress=True) as engine:
                seed_cache(engine.encoder, new, stored[base:])
            del chosen, vectors
        for path in files:  # the sizes in turns: a slow moment hits both alike
            for size in sizes:
                costs[size].append(measure_command(
                    ["add", str(path), "--index", str(folder / f"i{size}"), "--cache-dir",
                     str(cache), "--quiet"], folder))
        for size in sizes:
            table.add(**{"index papers": size,
                         "median s": statistics.median(c.seconds for c in costs[size]),
                         "MB written": statistics.median(c.written for c in costs[size]) / _MB,
                         "peak MB": statistics.median(c.peak for c in costs[size]) / _MB})
    return table

