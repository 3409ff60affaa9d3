#!/usr/bin/env python3
"""Load check: N concurrent clients against an embedsearch server on this machine.

Starts `embedsearch serve` on a free loopback port for --index (or uses --url, which
must be a loopback address), then for each client count runs that many threads, each
with its own keep-alive connection, sending requests back to back for --duration
seconds (at most --max-requests in all). Prints requests/s, p50/p99 latency and the
error count (any non-200 answer or failed request), and exits 1 if there were errors.

--soak SECONDS instead serves a copy of --index with writes allowed behind a token, and
for that long runs mixed reads from 4 threads while 2 threads add papers (POST /papers)
and remove some of them (DELETE); then prints the requests by status, the server's RSS
at the start and the end, and whether every acknowledged addition is there and every
acknowledged removal gone. It exits 1 on any 5xx, failed request or lost write.

    python scripts/loadtest.py --index indexes/iclr2025 --clients 1,4,16
    python scripts/loadtest.py --index indexes/dev80k --mix mixed --json
    python scripts/loadtest.py --index indexes/dev80k --soak 60
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from serving import LOOPBACK, connect, get_json, load_queries, rss_mb, server, timed_get


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

    def client(number: int) -> None:
        connection = connect(url)
        position = number * 7
        while time.monotonic() < stop:
            with lock:
                if next(budget, None) is None:
                    break
            elapsed = timed_get(connection, paths[position % len(paths)])
            position += 1
            if elapsed is None:
                connection.close()
                connection = connect(url)
            with lock:
                if elapsed is not None:
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


SOAK_READERS, SOAK_WRITERS = 4, 2
SOAK_WORDS = ("robots grasp tactile policy diffusion graph bandits regret quantum codes "
              "attention sparse retrieval agents language vision audio molecules").split()


@dataclass
class SoakRun:
    """What the soak saw: requests by kind and status, and the acknowledged writes."""

    statuses: Counter[str] = field(default_factory=Counter)
    added: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, kind: str, status: int | str) -> None:
        with self.lock:
            self.statuses[f"{kind} {status}"] += 1



def call(connection: http.client.HTTPConnection, method: str, path: str,
         body: object = None, token: str = "") -> int:
    """One request on a keep-alive connection; its status (the body is read and dropped)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    connection.request(method, path, body=data, headers=headers)
    response = connection.getresponse()
    response.read()
    return response.status


Job = tuple[str, "str | Callable[[http.client.HTTPConnection], int]"]


def soak_client(url: str, run: SoakRun, stop: float, jobs: Iterator[Job]) -> None:
    """Send what `jobs` yields (a kind, then a path to GET or a write to make) until
    `stop`; a failed request is counted as 'error' and the connection remade."""
    connection = connect(url, 120)
    for kind, job in jobs:
        if time.monotonic() > stop:
            break
        try:
            run.count(kind, job(connection) if callable(job) else call(connection, "GET", job))
        except (OSError, http.client.HTTPException):
            run.count(kind, "error")
            connection.close()
            connection = connect(url, 120)
    connection.close()


def reads(paths: list[str], number: int, limit: int) -> Iterator[Job]:
    for count in range(limit):
        yield "read", paths[(number * 7 + count) % len(paths)]


def writes(run: SoakRun, token: str, number: int, limit: int) -> Iterator[Job]:
    """Adds of two new papers, and every third time the removal of an earlier one."""
    rng = random.Random(number)
    mine: list[str] = []
    for count in range(limit):
        ids = [f"soak:{number}:{count}:{half}" for half in "ab"]
        papers = [{"id": paper_id, "title": f"Soak paper {paper_id}", "abstract": " ".join(
            rng.choices(SOAK_WORDS, k=30)) + "."} for paper_id in ids]

        def add(connection: http.client.HTTPConnection, ids: list[str] = ids,
                papers: list[dict[str, str]] = papers) -> int:
            status = call(connection, "POST", "/papers", {"papers": papers}, token)
            if status == 200:
                with run.lock:
                    run.added.update(ids)
                mine.extend(ids)
            return status

        yield "add", add
        if count % 3 == 2 and mine:
            victim = mine.pop(rng.randrange(len(mine)))

            def remove(connection: http.client.HTTPConnection, victim: str = victim) -> int:
                path = f"/papers/{urllib.parse.quote(victim, safe='')}"
                status = call(connection, "DELETE", path, token=token)
                if status == 200:
                    with run.lock:
                        run.added.discard(victim)
                        run.removed.add(victim)
                return status

            yield "remove", remove


def lost_writes(url: str, run: SoakRun) -> list[str]:
    """Acknowledged additions that are missing and removals that are still there."""
    connection = connect(url)
    lost = []
    for paper_id, expected in [*[(i, 200) for i in sorted(run.added)],
                               *[(i, 404) for i in sorted(run.removed)]]:
        status = call(connection, "GET", f"/papers/{urllib.parse.quote(paper_id, safe='')}")
        if status != expected:
            lost.append(f"{paper_id}: {status}, expected {expected}")
    connection.close()
    return lost


def soak(args: argparse.Namespace) -> int:
    """Serve a copy of the index with writes on, read and write for --soak seconds."""
    token = secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="embedsearch-soak-") as scratch:
        copy = Path(scratch) / "index"
        shutil.copytree(args.index, copy)
        with server(copy, token=token) as (url, pid):
            paths = request_paths(url, "mixed", args.k, load_queries(args.queries))
            run_level(url, 2, paths, args.warmup, 10_000)
            rss_start, run = rss_mb(pid), SoakRun()
            stop, limit = time.monotonic() + args.soak, args.max_requests
            work = [reads(paths, n, limit) for n in range(SOAK_READERS)]
            work += [writes(run, token, n, limit) for n in range(SOAK_WRITERS)]
            threads = [threading.Thread(target=soak_client, args=(url, run, stop, jobs))
                       for jobs in work]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            rss_end, lost = rss_mb(pid), lost_writes(url, run)
            papers = get_json(url, "/health")["papers"]
    failed = sum(n for key, n in run.statuses.items() if key.split()[1][0] in "5e")
    summary = {"seconds": args.soak, "papers_at_end": papers, "requests": dict(sorted(
        run.statuses.items())), "5xx_or_failed": failed, "rss_mb_start": rss_start,
        "rss_mb_end": rss_end, "added_present": len(run.added) - sum(
            " expected 200" in line for line in lost), "added_acknowledged": len(run.added),
        "removed_absent": len(run.removed) - sum(" expected 404" in line for line in lost),
        "removed_acknowledged": len(run.removed), "lost": lost[:20]}
    if args.json:
        print(json.dumps(summary))
    else:
        for key, value in summary.items():
            print(f"{key:>22}: {value}")
    return 1 if failed or lost else 0


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
    parser.add_argument("--soak", type=float, metavar="SECONDS",
                        help="reads with writes interleaved on a copy of --index for "
                             "SECONDS (at most --max-requests per thread); see above")
    args = parser.parse_args(argv)
    if args.url and urllib.parse.urlsplit(args.url).hostname not in LOOPBACK:
        parser.error("--url must be a loopback address: this check loads this machine only")
    if args.soak is not None and not args.index:
        parser.error("--soak needs --index: it writes, so it serves a copy of its own")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.soak is not None:
        return soak(args)
    if args.url:
        results = measure(args.url, args)
    else:
        with server(args.index) as (url, _):
            results = measure(url, args)
    if args.json:
        for summary in results:
            print(json.dumps(summary))
    return 1 if any(summary["errors"] for summary in results) else 0


if __name__ == "__main__":
    sys.exit(main())
