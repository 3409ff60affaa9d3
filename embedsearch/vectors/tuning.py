"""The rules that choose and tune a vector index, each with the measurement behind it.

Figures are from these 2-core machines, one search thread, 384-d MiniLM vectors of the
79.5k-paper dev corpus: exact Flat search costs about 0.073 µs per vector per query
(5.8 ms at 79.5k, 68 ms at 1M); HNSW32 (efConstruction 200, efSearch 64) answers in
0.35 ms at recall@10 0.986.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "EXACT_MAX",
    "choose_index_type",
    "exact_subset_limit",
    "hnsw_params",
    "ivf_params",
    "search_threads",
]

#: Up to this many vectors an index is exact by default. Exact search is then at most
#: ~3.7 ms a query (a third of the 10 ms end-to-end budget), has recall 1.0 by
#: definition, and builds instantly; past it the cost grows linearly while HNSW stays
#: under a millisecond, so the approximate index pays for its build time and its ~1.5%
#: recall loss.
EXACT_MAX = 50_000

#: A filter that admits at most this many vectors is searched exactly over them: ~1.5 ms
#: for 20k vectors, where graph search restricted to a small fraction of the corpus
#: walks many rejected nodes and can come back short.
EXACT_SUBSET_MAX = 20_000


def choose_index_type(count: int, exact_max: int = EXACT_MAX) -> str:
    """'flat' (exact) for corpora up to `exact_max` vectors, else 'hnsw'."""
    return "flat" if count <= exact_max else "hnsw"


def exact_subset_limit(count: int, limit: int = EXACT_SUBSET_MAX) -> int:
    """Largest admissible subset searched exactly instead of through the approximate index."""
    return min(count, limit)


def hnsw_params(count: int) -> dict[str, Any]:
    """HNSW graph degree and beam widths.

    M=32 with efConstruction 200 reached recall@10 0.986 at efSearch 64 on the dev
    corpus; the graph costs 32*2*4 = 256 bytes a vector beyond the vectors themselves.
    """
    return {"M": 32, "efConstruction": 200, "efSearch": 64}


def ivf_params(count: int) -> dict[str, Any]:
    """IVF list count and probes.

    nlist ~ 4*sqrt(n) is FAISS's usual starting point; k-means needs about 39 training
    points per list to be stable, which caps nlist on small corpora. Probing 1/8 of the
    lists (at least 8) measured recall@10 0.958 on 5.8k dev papers (nlist 146) and 0.999
    on 79k (nlist 1125), held-out papers as queries.
    """
    nlist = max(1, min(int(4 * math.sqrt(max(count, 1))), count // 39))
    return {"nlist": nlist, "nprobe": min(nlist, max(8, nlist // 8))}


def search_threads(queries: int, cores: int) -> int:
    """Threads for one FAISS search call.

    A single query gains nothing from a second thread and, with torch's own OpenMP pool
    still spinning after encoding, two pools fight for two cores (measured: 36 ms instead
    of 18 ms end to end). Batches of queries split across cores well.
    """
    return 1 if queries < 16 else max(1, cores)
