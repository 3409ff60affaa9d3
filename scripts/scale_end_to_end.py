#!/usr/bin/env python3
"""An index of N papers built, opened and searched end to end through the public API.

The dev papers are replicated to `--count` papers: copy c of a paper gets the id
"ID~c" and its title " (replica c)" added; its vector is the paper's own stored embedding
plus noise (`benchmark.scale.noisy_corpus`, cyclic), written
to a memory-mapped file a block at a time. `build` streams the papers as a generator
into `SearchEngine.build(out, papers, vectors=...)`, so the build holds one buffer
(`writing.buffer_full`), and prints its seconds, peak RSS and the index's size on disk.

`measure` opens the index in this fresh process and prints the seconds from `open` to
the first answer; resident memory after it and after the queries, as RSS and as its
two parts (anonymous: what the process holds; file: mapped pages of the index, which
the kernel may take back); warm p50/p99 with query encoding of the dev queries (odd
ids, `--queries` of them, repeated to 1,000 for the memory figure) in hybrid, dense
and lexical mode, year- and venue-filtered hybrid queries, a pasted abstract (300
words), `similar` of one paper and of a 50-paper library; then `add` of 100 new papers
(encoded) and `remove` of one, which it undoes.

`--cold` empties the page cache first (root) and stops after the first answer;
`--recall` adds dense recall@10 against exact search over every replicated vector.

    python scripts/scale_end_to_end.py build --count 1000000 --out /tmp/scale/1m
    python scripts/scale_end_to_end.py measure --out /tmp/scale/1m --cold
    python scripts/scale_end_to_end.py measure --out /tmp/scale/1m --recall --writes
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from embedsearch import Filters, Paper, SearchEngine
from embedsearch.benchmark.scale import noisy_corpus
from embedsearch.evaluation.devset import DevSet, default_dev_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fulltext_cost import cpu_name  # noqa: E402


def memory_mb(field: str = "VmRSS") -> float:
    """This process's resident memory (`VmHWM`: its peak; `RssAnon`, `RssFile`: its
    parts) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def resident() -> dict[str, int]:
    """RSS and its anonymous and file-backed parts, MB."""
    return {name: round(memory_mb(field)) for name, field in
            (("rss_mb", "VmRSS"), ("anon_mb", "RssAnon"), ("file_mb", "RssFile"))}


def size_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


def replicated(papers: Sequence[Paper], count: int) -> Iterator[Paper]:
    """`papers` repeated to `count`, each copy with an id and title of its own."""
    for row in range(count):
        paper, copy = papers[row % len(papers)], row // len(papers)
        yield paper if not copy else dataclasses.replace(
            paper, id=f"{paper.id}~{copy}", title=f"{paper.title} (replica {copy})")


def vectors_file(base: np.ndarray, count: int, path: Path) -> np.ndarray:
    """The replicated corpus's vectors, memory-mapped from `path` (made if absent)."""
    if not path.exists():
        out = np.lib.format.open_memmap(path, "w+", np.float32, (count, base.shape[1]))
        noisy_corpus(base, count, out=out, cyclic=True)
        out.flush()
        del out
    mapped: np.ndarray = np.load(path, mmap_mode="r")
    return mapped


def build(args: argparse.Namespace, devset: DevSet) -> None:
    base = devset.stored_vectors()
    if base is None:
        raise SystemExit(f"no stored embeddings in {args.dev_dir}")
    vectors = vectors_file(base, args.count, args.out.with_suffix(".vectors.npy"))
    papers = devset.papers
    start = time.perf_counter()
    SearchEngine.build(args.out, replicated(papers, args.count), vectors=vectors,
                       overwrite=True).close()
    seconds = time.perf_counter() - start
    manifest = json.loads((args.out / "manifest.json").read_text())
    print(json.dumps({"cpu": cpu_name(), "papers": args.count, "build_s": round(seconds, 1),
                      "peak_rss_mb": round(memory_mb("VmHWM")), "disk_mb": round(size_mb(
                          args.out)), "segments": len(manifest["segments"])}))


def _timed(call: Callable[[], object], rounds: Sequence[object]) -> tuple[float, float]:
    """p50 and p99 milliseconds of `call` once per round."""
    seconds = []
    for _ in rounds:
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return (statistics.median(seconds) * 1000,
            float(np.percentile(seconds, 99)) * 1000)


def pasted_abstract(papers: Sequence[Paper], words: int = 300) -> str:
    """A 300-word text as a reader pastes it: dev abstracts run together."""
    text = " ".join(paper.abstract for paper in papers[:10]).split()
    return " ".join(text[:words])


def _latencies(engine: SearchEngine, queries: list[str], devset: DevSet
               ) -> tuple[dict[str, object], int]:
    """p50/p99 of each kind of request, and how many requests that made."""
    found: dict[str, object] = {}
    made = 0

    def record(name: str, call: Callable[[], object], rounds: Sequence[object]) -> None:
        nonlocal made
        p50, p99 = _timed(call, rounds)
        found[name] = {"p50_ms": round(p50, 1), "p99_ms": round(p99, 1)}
        made += len(rounds)

    for mode in ("hybrid", "dense", "lexical"):
        texts = iter(queries * 2)
        record(mode, lambda: engine.search(next(texts), k=10, mode=mode), queries)
    for name, filters in (("year 2024-2025", Filters(year_min=2024, year_max=2025)),
                          ("venue ICLR", Filters(venues=("ICLR",)))):
        texts = iter(queries * 2)
        record(name, lambda: engine.search(next(texts), k=10, filters=filters), queries[:50])
    pasted = [pasted_abstract(devset.papers[i * 10:]) for i in range(20)]
    texts = iter(pasted * 2)
    record("pasted abstract", lambda: engine.search(next(texts), k=10), pasted)
    ids = iter([paper.id for paper in devset.papers[:100]])
    record("similar one", lambda: engine.similar(next(ids), k=10), range(50))
    libraries = iter([[paper.id for paper in devset.papers[i * 50:(i + 1) * 50]]
                      for i in range(40)])
    record("similar library of 50", lambda: engine.similar(next(libraries), k=10), range(20))
    return found, made


def _writes(engine: SearchEngine, devset: DevSet) -> dict[str, float]:
    """Seconds to add 100 new papers (encoded: titles new to this run miss the embedding
    cache) and to remove one; both undone after."""
    run = time.time_ns()
    new = [dataclasses.replace(paper, id=f"{paper.id}~added", title=f"{paper.title} ({run})")
           for paper in devset.papers[:100]]
    start = time.perf_counter()
    engine.add(new)
    added = time.perf_counter() - start
    start = time.perf_counter()
    engine.remove([devset.papers[200].id])
    removed = time.perf_counter() - start
    engine.remove([paper.id for paper in new])
    engine.add([devset.papers[200]])
    return {"add_100_s": round(added, 2), "remove_1_s": round(removed, 2)}


def drop_page_cache() -> bool:
    """Empty the kernel's page cache (root only), for a cold open; whether it could."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def dense_recall(engine: SearchEngine, queries: list[str], vectors: np.ndarray,
                 papers: Sequence[Paper]) -> float:
    """Recall@10 of dense search against exact search over every replicated vector
    (`vectors`, row r the paper `replicated` gave row r)."""
    encoded = engine.encoder.encode_queries(queries)
    best = np.full((len(queries), 10), -np.inf, np.float32)
    rows = np.zeros((len(queries), 10), np.int64)
    for start in range(0, len(vectors), 250_000):  # a block's scores at a time
        scores = np.asarray(vectors[start:start + 250_000], np.float32) @ encoded.T
        both = np.concatenate([best, scores.T], axis=1)
        held = np.concatenate([rows, np.arange(start, start + len(scores))[None, :].repeat(
            len(queries), 0)], axis=1)
        top = np.argsort(-both, axis=1, kind="stable")[:, :10]
        best, rows = np.take_along_axis(both, top, 1), np.take_along_axis(held, top, 1)
    count = len(papers)
    found = []
    for text, exact in zip(queries, rows):
        truth = {papers[r % count].id + (f"~{r // count}" if r // count else "") for r in exact}
        hits = {hit.paper.id for hit in engine.search(text, k=10, mode="dense",
                                                       evidence=False)}
        found.append(len(truth & hits) / 10)
    return float(np.mean(found))


def measure(args: argparse.Namespace, devset: DevSet) -> None:
    odd = [q.text for q in devset.queries if int(re.findall(r"\d+", q.qid)[-1]) % 2]
    queries = odd[:args.queries]
    cold = args.cold and drop_page_cache()
    start = time.perf_counter()
    engine = SearchEngine.open(args.out)
    opened = time.perf_counter() - start
    engine.search(queries[0], k=10)
    first = time.perf_counter() - start
    manifest = json.loads((args.out / "manifest.json").read_text())
    found: dict[str, object] = {"cpu": cpu_name(), "papers": len(engine),
                                "segments": len(manifest["segments"]),
                                "disk_mb": round(size_mb(args.out)),
                                "page_cache": "cold" if cold else "warm",
                                "open_s": round(opened, 2), "first_answer_s": round(first, 2),
                                "after_first_answer": resident()}
    if args.cold:
        print(json.dumps(found))
        return
    if args.recall:
        vectors = np.load(args.out.with_suffix(".vectors.npy"), mmap_mode="r")
        found["dense_recall_at_10"] = round(dense_recall(engine, queries[:100], vectors,
                                                         devset.papers), 3)
    latencies, made = _latencies(engine, queries, devset)
    found.update(latencies)
    for text in (odd * 2)[:max(0, 999 - made)]:  # 1,000 with the first answer
        engine.search(text, k=10)
    found["after_1000_requests"] = resident()
    if args.writes:
        found.update(_writes(engine, devset))
    print(json.dumps(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=("build", "measure"))
    parser.add_argument("--dev-dir", type=Path, default=default_dev_dir())
    parser.add_argument("--out", type=Path, required=True, help="the index directory")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", action="store_true",
                        help="measure: also add 100 papers and remove one (then undo both)")
    parser.add_argument("--cold", action="store_true",
                        help="measure: empty the page cache first (root) and stop after the "
                             "first answer")
    parser.add_argument("--recall", action="store_true",
                        help="measure: also dense recall@10 against exact search over every "
                             "vector (100 queries)")
    args = parser.parse_args()
    devset = DevSet(args.dev_dir)
    (build if args.step == "build" else measure)(args, devset)


if __name__ == "__main__":
    main()
