"""How much memory reading a corpus takes: 1M JSON Lines records through `read_papers`.

Writes a 1M-record JSONL file (realistic sizes: ~1,000-character abstracts, titles,
three authors, keywords) in a temporary folder, deleted afterwards, and reads it twice
in this process:

1. `iter_papers`, each paper dropped once read: the reading stage alone. Its resident
   memory should stay flat from the first 100k papers to the last, since the readers
   hold one line at a time.
2. `read_papers`, which keeps every paper (what `build` does): memory grows by the
   papers themselves, which the script also measures (`sys.getsizeof` of each record's
   objects), so that the rest, the reading's own cost, can be told apart.

A thread watches how far into the file the reader is (its offset in
/proc/self/fdinfo) and prints RSS and peak RSS each time another 100k records have
been read. Linux only (/proc). Usage: python scripts/reading_memory.py [--records N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from embedsearch import Paper
from embedsearch.readers import iter_papers, read_papers

__all__ = ["main"]

_STEP = 100_000
_WORDS = ("graph", "neural", "network", "attention", "sparse", "diffusion", "model", "learning",
          "representation", "transformer", "optimization", "gradient", "benchmark", "language",
          "protein", "molecule", "robust", "adversarial", "kernel", "bayesian", "policy",
          "reinforcement", "contrastive", "embedding", "retrieval", "scaling", "efficient",
          "we", "propose", "show", "that", "the", "of", "and", "a", "for", "with", "on", "in")


def _records(count: int, seed: int = 0) -> list[dict[str, object]]:
    """`count` distinct records of realistic field sizes."""
    rng = random.Random(seed)

    def words(n: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(n))

    return [{"title": words(9).capitalize(), "abstract": words(140).capitalize() + ".",
             "authors": [words(2).title() for _ in range(3)], "keywords": [words(1), words(2)],
             "venue": "ICLR", "year": 2000 + i % 26} for i in range(count)]


def write_corpus(path: Path, count: int) -> list[int]:
    """Writes `count` records; returns the byte offset after each 100k-th record."""
    templates = _records(1000)
    marks = []
    with open(path, "w", encoding="utf-8") as out:
        for number in range(1, count + 1):
            record = {"id": f"p{number}", **templates[number % len(templates)],
                      "url": f"https://example.org/p{number}"}
            out.write(json.dumps(record) + "\n")
            if number % _STEP == 0:
                marks.append(out.tell())
    return marks


def _memory_mib() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MiB."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def _offset(path: Path) -> int | None:
    """How far this process has read into `path` (any open descriptor of it)."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                for line in Path(f"/proc/self/fdinfo/{fd}").read_text().splitlines():
                    if line.startswith("pos:"):
                        return int(line.split()[1])
        except OSError:
            continue
    return None


class _Watch(threading.Thread):
    """Prints RSS as the reader passes each 100k-record mark of the file."""

    def __init__(self, path: Path, marks: list[int], label: str) -> None:
        super().__init__(daemon=True)
        self.path, self.marks, self.label = path, marks, label
        self.rows: list[tuple[int, float, float]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while len(self.rows) < len(self.marks) and not self.done.is_set():
            offset = _offset(self.path)
            if offset is not None and offset >= self.marks[len(self.rows)]:
                self.record()
            time.sleep(0.005)

    def record(self) -> None:
        rss, peak = _memory_mib()
        count = (len(self.rows) + 1) * _STEP
        self.rows.append((count, rss, peak))
        print(f"  {self.label}: {count:>9,} papers  RSS {rss:8.1f} MiB  peak {peak:8.1f} MiB",
              flush=True)

    def finish(self) -> None:
        """The last mark is the file's end, passed as the reader closes it: record it now."""
        self.done.set()
        self.join()
        while len(self.rows) < len(self.marks):
            self.record()


def _paper_bytes(paper: Paper) -> int:
    """The memory of one paper's own objects: the record, its strings and tuples."""
    parts: list[object] = [paper, paper.id, paper.abstract, paper.title, paper.venue,
                           paper.url, paper.tldr, paper.primary_area, paper.authors,
                           paper.keywords, *paper.authors, *paper.keywords]
    return sum(sys.getsizeof(part) for part in parts)


def _measure(path: Path, marks: list[int], label: str, keep: bool) -> tuple[list[Paper], float]:
    watch = _Watch(path, marks, label)
    watch.start()
    started = time.perf_counter()
    papers: list[Paper] = []
    if keep:
        papers = read_papers([path])
    else:
        for _paper, _where in iter_papers([path]):
            pass
    watch.finish()
    return papers, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="embedsearch-reading-") as folder:
        path = Path(folder) / "corpus.jsonl"
        marks = write_corpus(path, args.records)
        size = path.stat().st_size / 2**20
        base, _ = _memory_mib()
        print(f"{args.records:,} records, {size:,.0f} MiB of JSONL; RSS before reading "
              f"{base:.1f} MiB")
        _, seconds = _measure(path, marks, "streamed (iter_papers)", keep=False)
        streamed, streamed_peak = _memory_mib()
        print(f"streamed: {seconds:.1f} s, RSS after {streamed:.1f} MiB, peak {streamed_peak:.1f}"
              f" MiB ({streamed_peak - base:+.1f} MiB over the start)")
        papers, seconds = _measure(path, marks, "kept (read_papers)", keep=True)
        kept, kept_peak = _memory_mib()
        own = sum(_paper_bytes(paper) for paper in papers) / 2**20
        per_step = (kept - streamed) / (len(papers) / _STEP)
        print(f"kept: {seconds:.1f} s, {len(papers):,} papers, RSS {kept:.1f} MiB "
              f"({kept - streamed:+.1f} MiB, {per_step:.1f} MiB per 100k papers); the papers' "
              f"own objects: {own:.1f} MiB ({own / (len(papers) / _STEP):.1f} MiB per 100k)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
