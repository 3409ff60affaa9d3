"""What an update costs against a full build: `add` of 1% new papers, and a rebuild.

The full build encodes every paper with the cache off, as a first build does. `add`
then encodes only the new 1%; a rebuild of the grown corpus (`build --overwrite`) reads
everything it has seen from the embedding cache and encodes only the new papers too.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ..engine import SearchEngine
from ..evaluation.devset import DevSet
from .report import Table

__all__ = ["updates_table"]


def updates_table(devset: DevSet, count: int) -> Table:
    papers = devset.papers[: count + count // 100]
    base, extra = papers[:count], papers[count:]
    table = Table(f"Updating an index of {count} papers with {len(extra)} new ones (1%)",
                  ["operation", "seconds", "share of full build"],
                  "Default backend; the embedding cache starts empty.")
    with tempfile.TemporaryDirectory(prefix="embedsearch-bench-") as folder:
        cache = Path(folder) / "cache"
        start = time.perf_counter()
        SearchEngine.build(Path(folder) / "index", base, cache=False)
        full = time.perf_counter() - start
        table.add(operation="full build (encode all, cache off)", seconds=full,
                  **{"share of full build": 1.0})
        SearchEngine.build(Path(folder) / "warm", base, cache_dir=cache)  # fills the cache
        engine = SearchEngine.open(Path(folder) / "warm", cache_dir=cache)
        start = time.perf_counter()
        engine.add(extra)
        added = time.perf_counter() - start
        table.add(operation="add 1% new papers", seconds=added,
                  **{"share of full build": added / full})
        start = time.perf_counter()
        SearchEngine.build(Path(folder) / "warm", papers, cache_dir=cache, overwrite=True)
        rebuilt = time.perf_counter() - start
        table.add(operation="rebuild with 1% new papers (cache warm)", seconds=rebuilt,
                  **{"share of full build": rebuilt / full})
    return table
