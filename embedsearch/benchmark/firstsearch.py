"""The first search on a fresh machine: `embedsearch search` against plain
sentence-transformers, each a new process with an empty cache and no index.

embedsearch builds the bundled sample's index (38 abstracts) on first use, so its first
search pays for loading the model, encoding the abstracts, writing the index and
answering; the plain pipeline loads the model, encodes the same texts and the query and
ranks them by exact cosine. The two take turns, and the ratio is the median of the
per-pair ratios. A second search of the index it built is timed too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .report import Table

__all__ = ["first_search_table"]

_QUERY = "low-rank visual prompting"
# The plain pipeline, as a newcomer writes it: no embedsearch code on its path but the
# list of the bundled files and the model's folder (given as arguments).
_PLAIN = """
import sys
import numpy as np
from sentence_transformers import SentenceTransformer
texts = [t.strip() for f in sys.argv[3:] for t in open(f).read().split("\\n\\n")
         if len(t.strip()) > 100]  # the abstracts, not the files' title lines
model = SentenceTransformer(sys.argv[1], device="cpu")
docs = model.encode(texts, normalize_embeddings=True)
query = model.encode([sys.argv[2]], normalize_embeddings=True)[0]
for i in np.argsort(-(docs @ query))[:10]:
    print(round(float(docs[i] @ query), 4), texts[i][:60])
"""


def _seconds(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def first_search_table(runs: int) -> Table:
    from ..bundled import corpus_files
    from ..encoding import resolve_model
    from ..encoding.models import offline_hub

    files = [str(path) for path in corpus_files()]
    plain = [sys.executable, "-c", _PLAIN, str(resolve_model().path), _QUERY, *files]
    ours = [sys.executable, "-m", "embedsearch.cli", "search", _QUERY, "-q"]
    timings: dict[str, list[float]] = {"plain": [], "first": [], "second": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="embedsearch-first-") as folder:
            env = {**os.environ, "EMBEDSEARCH_CACHE_DIR": str(Path(folder) / "cache")}
            offline_hub(env)  # the plain pipeline's child loads sentence-transformers too
            timings["plain"].append(_seconds(plain, Path(folder), env))
            timings["first"].append(_seconds(ours, Path(folder), env))
            timings["second"].append(_seconds(ours, Path(folder), env))
    ratios = [ours / plain for ours, plain in zip(timings["first"], timings["plain"])]
    table = Table(f"First search on a fresh machine, median of {runs} alternating runs",
                  ["pipeline", "median s", "min s", "max s", "x plain (median of pairs)"],
                  "Empty cache, no index; plain = load sentence-transformers, encode the 38 "
                  "bundled abstracts and the query, exact cosine ranking.")
    labels = {"plain": "plain sentence-transformers",
              "first": "embedsearch search (builds the index)",
              "second": "embedsearch search again"}
    for name, label in labels.items():
        values = timings[name]
        cells = {"median s": float(np.median(values)), "min s": min(values),
                 "max s": max(values)}
        if name == "first":
            cells["x plain (median of pairs)"] = float(np.median(ratios))
        table.add(pipeline=label, **cells)
    return table
