#!/usr/bin/env python3
"""Long run: an index that grows for hours under a server answering steady reads.

Builds an index of the dev corpus from its precomputed embeddings (all 79,509 papers
by default), serves it with `embedsearch serve`, and for --minutes runs --readers
client threads searching back to back (dev query texts) while a writer process, as a
cron job would, adds --add new papers and removes --remove papers every minute
through the Python API. The new papers are dev abstracts under new ids with a
sentence added, so they are encoded as any new paper is.

Every --every minutes, and at the start and the end, it prints (and with --json
writes) one row: the reads' p50/p99 latency over the window, the server's RSS, the
generation, the papers, the current generation's size on disk and the whole index
folder's, the write cycles acknowledged so far, the segments and the removed papers
they still hold.
At the end: recall@10 of the grown index against exact search over the same vectors,
the same for a fresh build of the same papers, and whether every acknowledged write
is there (every added paper present, every removed one gone).

    python scripts/long_run.py --data ../shared/data/papers --work /tmp/longrun \
        --minutes 120 --json longrun.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from serving import connect, rss_mb, server, timed_get

from embedsearch import Paper, SearchEngine
from embedsearch.papers import embedding_text
from embedsearch.readers import read_papers
from embedsearch.storage.exact import exact_search
from embedsearch.storage.local import LocalView
from embedsearch.storage.local.vectors import create_index


@dataclass
class Window:
    """The reads of one reporting window."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> tuple[list[float], int]:
        with self.lock:
            taken, errors = self.latencies, self.errors
            self.latencies, self.errors = [], 0
        return taken, errors


def _percentile(values: list[float], share: float) -> float:
    return float(np.percentile(values, share * 100)) * 1000 if values else 0.0



def _size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def reader(url: str, queries: list[str], window: Window, stop: threading.Event,
           number: int) -> None:
    """GET /search back to back, timing each."""
    from urllib.parse import quote

    connection = connect(url, 120)
    count = number * 7919
    while not stop.is_set():
        elapsed = timed_get(connection, f"/search?q={quote(queries[count % len(queries)])}&k=10")
        count += 1
        if elapsed is None:
            connection = connect(url, 120)
        with window.lock:
            if elapsed is not None:
                window.latencies.append(elapsed)
            else:
                window.errors += 1


def new_papers(source: list[dict[str, object]], minute: int, count: int,
               cached: bool = False) -> list[dict[str, object]]:
    """The papers the writer adds in `minute`: dev papers under new ids, their text
    changed (encoded as any new paper), or as they are (`cached`: their stored vectors
    are in the embedding cache, so the writer only writes)."""
    rng = random.Random(minute)
    out: list[dict[str, object]] = []
    for number in range(count):
        paper = source[rng.randrange(len(source))]
        if cached:
            out.append({"id": f"longrun:{minute}:{number}", "title": paper["title"],
                        "abstract": paper["abstract"]})
            continue
        out.append({"id": f"longrun:{minute}:{number}", "title": f"{paper['title']} (revisited)",
                    "abstract": f"{paper['abstract']} We revisit this in study {minute}.{number}."})
    return out


def _cache_stored_vectors(engine: SearchEngine, data: Path,
                          source: list[dict[str, object]]) -> None:
    """Put the dev papers' stored vectors in the engine's embedding cache, under the
    texts the index embeds."""
    vectors = np.load(data / "minilm_title_abstract_f16.npy")[: len(source)].astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    fields = engine.info().fields
    texts = [embedding_text(Paper(id=str(p["id"]), title=str(p["title"]),
                                  abstract=str(p["abstract"])), fields) for p in source]
    cache = engine.encoder.embedding_cache()
    assert cache is not None
    cache.put(engine.encoder.cache_namespace(), texts, vectors)


def writer(index: Path, source: list[dict[str, object]], minutes: float, add: int,
           remove: int, log: Path, data: Path | None = None) -> None:
    """Each minute: add `add` new papers, remove `remove` (some original, some added);
    writes the acknowledged ids to `log` as it goes (one JSON line per write). With
    `data`, the added papers' vectors come from its stored embeddings (see new_papers)."""
    rng = random.Random(0)
    with SearchEngine.open(index) as engine, open(log, "a", encoding="utf-8") as out:
        if data is not None:
            _cache_stored_vectors(engine, data, source)
        end = time.monotonic() + minutes * 60
        minute = 0
        original = [paper["id"] for paper in source]
        added: list[str] = []
        while time.monotonic() < end:
            began = time.monotonic()
            papers = new_papers(source, minute, add, cached=data is not None)
            engine.add(papers)
            out.write(json.dumps({"added": [p["id"] for p in papers]}) + "\n")
            added.extend(str(p["id"]) for p in papers)
            victims: set[str] = set()
            while len(victims) < remove:
                pool = added if rng.random() < 0.5 and added else original
                victims.add(str(pool[rng.randrange(len(pool))]))
            victims = {v for v in victims if v in engine}
            engine.remove(sorted(victims))
            out.write(json.dumps({"removed": sorted(victims)}) + "\n")
            out.flush()
            added = [i for i in added if i not in victims]
            minute += 1
            time.sleep(max(0.0, 60 - (time.monotonic() - began)))


def _cycles(log: Path) -> int:
    """Write cycles (an add and a remove) acknowledged so far."""
    if not log.exists():
        return 0
    return sum(1 for line in log.read_text().splitlines() if '"removed"' in line)


def row(label: str, index: Path, pid: int, window: Window, log: Path) -> dict[str, object]:
    latencies, errors = window.take()
    manifest = json.loads((index / "manifest.json").read_text())
    generation = index / f"g{manifest['generation']:06d}"
    segments = manifest.get("segments", [])
    return {"at": label, "reads": len(latencies), "read_errors": errors,
            "p50_ms": round(_percentile(latencies, 0.5), 1),
            "p99_ms": round(_percentile(latencies, 0.99), 1),
            "server_rss_mb": rss_mb(pid), "generation": manifest["generation"],
            "papers": manifest["count"], "generation_mb": round(_size_mb(generation), 1),
            "index_folder_mb": round(_size_mb(index), 1), "write_cycles": _cycles(log),
            "segments": len(segments),
            "deleted_held": sum(int(s.get("deleted", 0)) for s in segments)}


def recall(index: Path, queries: list[str]) -> dict[str, object]:
    """recall@10 against exact search: the grown index, and a fresh build of its
    vectors with the same rules."""
    with SearchEngine.open(index) as engine, engine.snapshot() as view:
        assert isinstance(view, LocalView)
        keys = view.keys()
        vectors = view.vectors(keys)
        encoded = engine.encoder.encode_queries(queries)
        _, truth = exact_search(vectors, keys, encoded, 10)
        none = np.zeros(0, np.int64)
        grown = np.array([view.dense(vector, 10, None, none)[1] for vector in encoded])
        fresh = create_index("auto", vectors.shape[1], len(keys))
        fresh.add(keys, vectors)
        _, rebuilt = fresh.search(encoded, 10)

    def score(found: np.ndarray) -> float:
        return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth)]))

    return {"recall@10 grown": round(score(grown), 4),
            "recall@10 fresh build": round(score(rebuilt), 4), "papers": len(keys),
            "index_type": str(fresh.kind)}


def acknowledged(index: Path, log: Path) -> dict[str, int]:
    added, removed = set(), set()
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        added.update(entry.get("added", []))
        removed.update(entry.get("removed", []))
        added -= set(entry.get("removed", []))
    with SearchEngine.open(index) as engine, engine.snapshot() as view:
        present = view.keys_of(added | removed)
    return {"acknowledged adds": len(added), "missing": len(added - present.keys()),
            "acknowledged removes": len(removed), "still there": len(removed & present.keys())}


def _records(data: Path) -> Iterator[dict[str, object]]:
    for paper in read_papers([data / "papers.jsonl.gz"]):
        yield {"id": paper.id, "title": paper.title, "abstract": paper.abstract}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the dev corpus folder")
    parser.add_argument("--work", type=Path, required=True, help="a scratch folder")
    parser.add_argument("--limit", type=int, help="start from the first N papers only")
    parser.add_argument("--minutes", type=float, default=120)
    parser.add_argument("--every", type=float, default=10, help="minutes between rows")
    parser.add_argument("--add", type=int, default=1000, help="papers added a minute")
    parser.add_argument("--remove", type=int, default=100, help="papers removed a minute")
    parser.add_argument("--readers", type=int, default=2, help="reading client threads")
    parser.add_argument("--json", type=Path, help="write every row and the end here")
    parser.add_argument("--cached", action="store_true",
                        help="add dev papers as they are, their stored vectors cached: the "
                             "writer only writes (what the index costs, not the encoder)")
    args = parser.parse_args(argv)

    source = list(_records(args.data))[: args.limit]
    index = args.work / "index"
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    began = time.perf_counter()
    subprocess.run([sys.executable, str(Path(__file__).with_name("index_from_embeddings.py")),
                    str(args.data / "papers.jsonl.gz"),
                    str(args.data / "minilm_title_abstract_f16.npy"), "--out", str(index),
                    *(["--limit", str(args.limit)] if args.limit else [])], check=True)
    print(f"built {len(source)} papers in {time.perf_counter() - began:.0f} s", flush=True)
    queries = [json.loads(line)["query"][:500]
               for line in (args.data / "queries.jsonl").read_text().splitlines()[::2]][:300]
    rows: list[dict[str, object]] = []
    log = args.work / "writes.jsonl"
    window, stop = Window(), threading.Event()
    with server(index) as (url, pid):
        log.touch()
        readers = [threading.Thread(target=reader, args=(url, queries, window, stop, n),
                                    daemon=True) for n in range(args.readers)]
        for thread in readers:
            thread.start()
        time.sleep(60)  # a warm start: the first minute's reads are the baseline window
        rows.append(row("start", index, pid, window, log))
        print(json.dumps(rows[-1]), flush=True)
        write = subprocess.Popen([sys.executable, __file__, "--writer", str(index),
                                  str(args.minutes), str(args.add), str(args.remove),
                                  str(log), str(args.data), str(args.limit or 0),
                                  "cached" if args.cached else "encoded"])
        started = time.monotonic()
        while write.poll() is None:
            time.sleep(5)
            elapsed = (time.monotonic() - started) / 60
            if elapsed >= args.every * len(rows):
                rows.append(row(f"{elapsed:.1f} min", index, pid, window, log))
                print(json.dumps(rows[-1]), flush=True)
        rows.append(row("end", index, pid, window, log))
        print(json.dumps(rows[-1]), flush=True)
        stop.set()
    end = {**recall(index, queries[:200]), **acknowledged(index, log),
           "writer_exit": write.returncode, "minutes": args.minutes}
    print(json.dumps(end), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "end": end}, indent=2) + "\n")
    return 0 if write.returncode == 0 and not end["missing"] and not end["still there"] else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        index, minutes, add, remove, log, data, limit, vectors = sys.argv[2:10]
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        writer(Path(index), list(_records(Path(data)))[: int(limit) or None],
               float(minutes), int(add), int(remove), Path(log),
               Path(data) if vectors == "cached" else None)
        sys.exit(0)
    sys.exit(main())
