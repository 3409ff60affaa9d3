#!/usr/bin/env python3
"""Load check: N concurrent clients against an embedsearch server on this machine.

Starts `embedsearch serve` on a free loopback port for --index (or uses --url, which
must be a loopback address), then for each client count runs that many threads, each
with its own keep-alive connection, sending requests back to back for --duration
seconds (at most --max-requests in all). Prints requests/s, p50/p99 latency and the
error count (any non-200 answer or failed request), and exits 1 if there were errors.

    python scripts/loadtest.py --index indexes/iclr2025 --clients 1,4,16
    python scripts/loadtest.py --index indexes/dev80k --mix mixed --json
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

QUERIES = [
    "low-rank visual prompting", "offline reinforcement learning from human preferences",
    "language model agents that browse the web", "self-supervised audio representations",
    "diffusion models for image generation", "contextual bandits with regret bounds",
    "grounding 3D objects from language", "graph neural networks for molecules",
    "robot grasping with tactile sensing", "monocular SLAM with loop closure",
    "adversarial robustness of image classifiers", "causal discovery from observational data",
    "legged robot locomotion on rough terrain", "privacy-preserving federated learning",
    "retrieval-augmented question answering", "visual odometry for drones",
]
DEV_QUERIES = Path(__file__).resolve().parents[2] / "shared" / "data" / "papers" / "queries.jsonl"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@dataclass
class Level:
    """What one client count measured."""

    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    seconds: float = 0.0

    def summary(self) -> dict[str, float | int]:
        ordered = sorted(self.latencies)

        def pick(share: float) -> float:
            return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0

        return {"clients": self.clients, "requests": len(ordered) + self.errors,
                "errors": self.errors, "rps": round(len(ordered) / self.seconds, 1),
                "p50_ms": round(pick(0.50) * 1000, 1), "p99_ms": round(pick(0.99) * 1000, 1)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(index: Path, *, startup: float = 120) -> Iterator[str]:
    """`embedsearch serve` on a free loopback port, stopped on exit."""
    port = free_port()
    command = [sys.executable, "-m", "embedsearch.cli", "serve", "--index", str(index),
               "--port", str(port), "--no-map", "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the server exited with status {process.returncode}")
            try:
                if get_json(url, "/health")["status"] == "ok":
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start in time") from None
                time.sleep(0.25)
        yield url
    finally:
        process.terminate()
        process.wait(30)


def get_json(url: str, path: str) -> dict[str, object]:
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return dict(json.loads(response.read()))
    finally:
        connection.close()


def load_queries(count: int) -> list[str]:
    if DEV_QUERIES.is_file():
        with open(DEV_QUERIES, encoding="utf-8") as handle:
            found = [json.loads(line)["query"] for line in handle if line.strip()]
        random.Random(0).shuffle(found)
        return [query[:1000] for query in found[:count]]
    return QUERIES


def request_paths(url: str, mix: str, k: int, queries: list[str]) -> list[str]:
    """The request paths to cycle through: searches, and for `mixed` also paper pages and
    similar papers of ids that searches returned."""
    searches = [f"/search?{urllib.parse.urlencode({'q': query, 'k': k})}" for query in queries]
    if mix == "search":
        return searches
    ids: list[str] = []
    for path in searches[:20]:
        hits = get_json(url, path)["hits"]
        assert isinstance(hits, list)
        ids.extend(str(hit["id"]) for hit in hits[:3])
    papers = [f"/papers/{urllib.parse.quote(paper_id, safe='')}" for paper_id in ids]
    similar = [f"{path}/similar?k={k}" for path in papers]
    # About 8 searches to 1 similar-papers list and 1 paper page, as a person browses.
    paths = searches * 8 + similar * max(1, len(searches) // len(similar)) + papers * max(
        1, len(searches) // len(papers))
    random.Random(1).shuffle(paths)
    return paths


def run_level(url: str, clients: int, paths: list[str], duration: float,
              max_requests: int) -> Level:
    level = Level(clients)
    lock = threading.Lock()
    budget = iter(range(max_requests))
    stop = time.monotonic() + duration
    parts = urllib.parse.urlsplit(url)

    def client(number: int) -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        position = number * 7
        while time.monotonic() < stop:
            with lock:
                if next(budget, None) is None:
                    break
            path = paths[position % len(paths)]
            position += 1
            started = time.perf_counter()
            try:
                connection.request("GET", path)
                response = connection.getresponse()
                response.read()
                ok = response.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                connection.close()
                connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
            elapsed = time.perf_counter() - started
            with lock:
                if ok:
                    level.latencies.append(elapsed)
                else:
                    level.errors += 1
        connection.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    level.seconds = time.perf_counter() - began
    return level


def measure(url: str, args: argparse.Namespace) -> list[dict[str, float | int]]:
    info = get_json(url, "/info")
    paths = request_paths(url, args.mix, args.k, load_queries(args.queries))
    run_level(url, 2, paths, args.warmup, 10_000)  # warm caches and the thread pool
    results = []
    for clients in args.clients:
        summary = run_level(url, clients, paths, args.duration, args.max_requests).summary()
        summary = {"papers": info["count"], "mix": args.mix, **summary}  # type: ignore[dict-item]
        results.append(summary)
        if not args.json:
            print(f"{summary['papers']:>7} papers  {args.mix:<6} {clients:>3} clients  "
                  f"{summary['requests']:>6} requests  {summary['rps']:>7} req/s  "
                  f"p50 {summary['p50_ms']:>6} ms  p99 {summary['p99_ms']:>7} ms  "
                  f"errors {summary['errors']}", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--index", type=Path, help="start a server on this index")
    where.add_argument("--url", help="a running server on this machine (loopback only)")
    parser.add_argument("--clients", default="1,4,16",
                        type=lambda text: [int(n) for n in text.split(",")],
                        help="comma-separated client counts (default 1,4,16)")
    parser.add_argument("--duration", type=float, default=10, help="seconds per client count")
    parser.add_argument("--max-requests", type=int, default=5000,
                        help="at most this many requests per client count")
    parser.add_argument("--warmup", type=float, default=2, help="seconds of warm-up")
    parser.add_argument("--mix", choices=("search", "mixed"), default="search",
                        help="search: GET /search only; mixed: also paper pages and similar")
    parser.add_argument("--k", type=int, default=10, help="results per request")
    parser.add_argument("--queries", type=int, default=200, help="distinct query texts")
    parser.add_argument("--json", action="store_true", help="one JSON object per level")
    args = parser.parse_args(argv)
    if args.url and urllib.parse.urlsplit(args.url).hostname not in LOOPBACK:
        parser.error("--url must be a loopback address: this check loads this machine only")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.url:
        results = measure(args.url, args)
    else:
        with server(args.index) as url:
            results = measure(url, args)
    if args.json:
        for summary in results:
            print(json.dumps(summary))
    return 1 if any(summary["errors"] for summary in results) else 0


if __name__ == "__main__":
    sys.exit(main())
