"""Cold start: `embedsearch info` and `embedsearch search` as fresh processes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from .report import Table

__all__ = ["coldstart_table"]


def _run(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "embedsearch.cli", *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def coldstart_table(index_dir: Path, runs: int) -> Table:
    table = Table(f"Cold start as a new process, median of {runs} runs",
                  ["command", "median s", "min s", "max s"],
                  f"Index: {index_dir}; the OS file cache is warm after the first run.")
    for label, args in (("embedsearch info", ["info", "--index", str(index_dir)]),
                        ("embedsearch search", ["search", "graph neural networks for "
                                                "molecules", "--index", str(index_dir)])):
        _run(args)
        timings = [_run(args) for _ in range(runs)]
        table.add(command=label, **{"median s": float(np.median(timings)),
                                    "min s": min(timings), "max s": max(timings)})
    return table
