"""A real `embedsearch serve` for the scripts that load it: started on a free loopback
port, probed until healthy, and asked over plain keep-alive HTTP connections.

Used by `loadtest.py` (its load levels and its soak); run those, not this.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["LOOPBACK", "QUERIES", "connect", "free_port", "get_json", "load_queries", "rss_mb",
           "server", "timed_get"]

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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(index: Path, *, startup: float = 120,
           token: str | None = None) -> Iterator[tuple[str, int]]:
    """`embedsearch serve` on a free loopback port (writes allowed behind `token`, if
    given); yields its URL and process id; stopped on exit."""
    port = free_port()
    command = [sys.executable, "-m", "embedsearch.cli", "serve", "--index", str(index),
               "--port", str(port), "--no-map", "--quiet"]
    env = dict(os.environ)
    if token:
        command.append("--allow-writes")
        env["EMBEDSEARCH_TOKEN"] = token  # not on the command line, where others see it
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
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
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(30)


def connect(url: str, timeout: float = 60) -> http.client.HTTPConnection:
    parts = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)


def get_json(url: str, path: str) -> dict[str, object]:
    connection = connect(url, 30)
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


def timed_get(connection: http.client.HTTPConnection, path: str) -> float | None:
    """Seconds one GET of `path` took to answer 200 and be read, or None if it did not
    (a failed connection is closed: the caller makes a new one)."""
    began = time.perf_counter()
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        if response.status == 200:
            return time.perf_counter() - began
    except (OSError, http.client.HTTPException):
        connection.close()
    return None


def rss_mb(pid: int) -> float | None:
    """The resident memory of process `pid` in MB (Linux's /proc), or None."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None
