"""A local build against a `--ray` build of the same dev papers, in one run.

Both encode everything (the embedding cache is off) into a flat index; Ray runs a local
instance with 2 actors of 1 thread each, the local build 2 threads in this process.
Rounds alternate which goes first, so drift in the machine's speed hits both alike;
the ratio is the median of the per-round ratios. Ray's start-up (`ray.init`) is paid
once and reported apart; every Ray build pays its actors' start (model load) itself.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from ..encoding import RayExecutor
from ..encoding.ray_executor import RayStats
from ..engine import SearchEngine
from ..evaluation.devset import DevSet
from ..papers import Paper
from ..storage import IndexOptions
from .report import Table

__all__ = ["ray_table"]

_MB = 1e6
_ACTORS = 2


class _PeakRss:
    """This process's peak resident memory while the block runs, sampled every 20 ms
    (getrusage's peak never falls, so it cannot tell two builds in one process apart)."""

    def __init__(self) -> None:
        self.peak = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.peak = max(self.peak, self._rss())

    def __enter__(self) -> _PeakRss:
        self.peak = self._rss()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()


def _vectors(index: Path) -> dict[str, np.ndarray]:
    with SearchEngine.open(index, verify=False) as engine, engine.snapshot() as view:
        keys = view.keys()
        papers = view.papers(keys)
        vectors = view.vectors(keys)
    return {papers[int(key)].id: row for key, row in zip(keys, vectors)}


def _timed_build(out: Path, papers: Sequence[Paper], executor: RayExecutor | None
                 ) -> tuple[float, int]:
    with _PeakRss() as rss:
        began = time.perf_counter()
        SearchEngine.build(out, papers, IndexOptions(index_type="flat"), cache=False,
                           overwrite=True, executor=executor).close()
        seconds = time.perf_counter() - began
    return seconds, rss.peak


def ray_table(devset: DevSet, count: int, rounds: int) -> Table:
    papers = devset.papers[:count]
    seconds: dict[str, list[float]] = {"local": [], "ray": []}
    driver: dict[str, int] = {"local": 0, "ray": 0}
    per_round: list[RayStats] = []
    began = time.perf_counter()
    executor = RayExecutor(actors=_ACTORS, threads_per_actor=1,
                           init_options={"num_cpus": os.cpu_count() or 2})
    imported = time.perf_counter() - began
    with executor, tempfile.TemporaryDirectory(prefix="embedsearch-bench-ray-") as folder:
        executor.start()
        startup = executor.stats.startup_seconds
        runs: dict[str, Callable[[int], Any]] = {
            "local": lambda r: _timed_build(Path(folder) / f"local{r}", papers, None),
            "ray": lambda r: _timed_build(Path(folder) / f"ray{r}", papers, executor)}
        for round_ in range(rounds):
            for name in (("local", "ray") if round_ % 2 == 0 else ("ray", "local")):
                executor.stats = RayStats()
                took, peak = runs[name](round_)
                seconds[name].append(took)
                driver[name] = max(driver[name], peak)
                if name == "ray":
                    per_round.append(executor.stats)
        local, distributed = _vectors(Path(folder) / "local0"), _vectors(Path(folder) / "ray0")
    cosines = [float(local[key] @ distributed[key]) for key in local]
    return _table(len(papers), seconds, driver, per_round, startup + imported,
                  min(cosines), sorted(local) == sorted(distributed))


def _table(count: int, seconds: dict[str, list[float]], driver: dict[str, int],
           per_round: list[RayStats], startup: float, min_cos: float, same_ids: bool) -> Table:
    table = Table(f"Local build against --ray ({_ACTORS} actors x 1 thread), {count} dev "
                  "papers", ["build", "median s", "rounds s", "papers/s",
                             "x local (median of rounds)",
                             "driver peak RSS MB", "worker peak RSS MB", "actor shares",
                             "min cos to local", "same ids"],
                  f"{len(seconds['local'])} alternating rounds, cache off, flat index; Ray "
                  f"start-up (import + ray.init) {startup:.1f} s, paid once, not in the "
                  "builds.")
    ratios = [r / local for r, local in zip(seconds["ray"], seconds["local"])]
    workers = [peak for stats in per_round for peak in stats.peak_rss_by_worker.values()]
    shares = " ".join("/".join(f"{share:.0%}" for share in sorted(stats.shares().values(),
                                                                 reverse=True))
                      for stats in per_round)  # one a/b pair per round
    for name in ("local", "ray"):
        median = float(np.median(seconds[name]))
        table.add(build=name, **{
            "median s": median, "rounds s": " ".join(f"{t:.0f}" for t in seconds[name]),
            "papers/s": count / median,
            "x local (median of rounds)": float(np.median(ratios)) if name == "ray" else 1.0,
            "driver peak RSS MB": driver[name] / _MB,
            "worker peak RSS MB": max(workers) / _MB if name == "ray" and workers else "",
            "actor shares": shares if name == "ray" else "",
            "min cos to local": min_cos if name == "ray" else 1.0,
            "same ids": same_ids if name == "ray" else True})
    return table
