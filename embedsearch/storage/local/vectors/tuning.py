"""The rules that choose and tune a vector index, each with the measurement behind it.

Figures are from these 2-core machines, one search thread, 384-d MiniLM vectors of the
79.5k-paper dev corpus: exact Flat search costs about 0.073 µs per vector per query
(5.8 ms at 79.5k, 68 ms at 1M); HNSW32 (efConstruction 200, efSearch 64) answers in
0.35 ms at recall@10 0.986.
"""

from __future__ import annotations

import math
from typing import Any

from ....errors import InputError

__all__ = [
    "EXACT_MAX",
    "PASSAGE_EXACT_MAX",
    "SEGMENT_EXACT_MAX",
    "choose_index_type",
    "estimate_bytes",
    "hnsw_params",
    "ivf_params",
    "ivfpq_params",
    "passage_index_rule",
    "rerank_depth",
    "search_threads",
    "segment_index_type",
]

#: Up to this many vectors an index is exact by default. Exact search is then at most
#: ~3.7 ms a query (a third of the 10 ms end-to-end budget), has recall 1.0 by
#: definition, and builds instantly; past it the cost grows linearly while HNSW stays
#: under a millisecond, so the approximate index pays for its build time and its ~1.5%
#: recall loss.
EXACT_MAX = 50_000

#: In an index past `exact_max`, a segment is exact only up to this many vectors: every
#: query scans each exact segment, and a few thousand vectors scan in under 0.4 ms,
#: while an approximate index of a size this small saves little and cannot train on
#: fewer (IVF-PQ needs 256 x 39 points). See `segment_index_type`.
SEGMENT_EXACT_MAX = 5_000

#: A segment's passages are exact only up to this many. The passage side is searched on
#: top of the abstracts' for every text query, so it gets a smaller share of the budget
#: than the papers' own index: on 40k passage vectors (dev abstracts, one thread, AMD
#: EPYC, k=200) exact search took 2.4 ms a query, HNSW32 with efSearch 128 0.50 ms at
#: recall@50 0.990 (efSearch 64: 0.29 ms, 0.961). Full text made hybrid queries 1.66x
#: as slow with exact passages. See `passage_index_rule`.
PASSAGE_EXACT_MAX = 10_000

#: The HNSW beam of a passages' graph: a paper's best passage must be found among the
#: first ~200 of tens of thousands, which efSearch 64 missed for 4% of the top 50.
PASSAGE_EF_SEARCH = 128

#: Past this many vectors HNSW is built with a narrower beam (see `hnsw_params`).
LARGE_HNSW = 200_000



def choose_index_type(count: int, exact_max: int = EXACT_MAX, *,
                      memory_budget: int | None = None, dim: int = 384) -> str:
    """'flat' (exact) up to `exact_max` vectors, else 'hnsw-sq8'; within `memory_budget`.

    Past `exact_max` the graph is over 8-bit codes, its candidates re-ranked exactly from
    the full vectors' file (see `reranked`): on 300k dev-derived vectors as good as the
    graph over float32 (recall@10 0.992 against 0.993, efSearch 200), faster (0.44 ms
    against 0.70) and 36% of its memory, which is what lets 2.5M papers be served in a
    few GB. When it does not fit the budget, the compressed 'ivfpq' index (48-byte codes)
    is chosen if that fits.
    """
    preferred = "flat" if count <= exact_max else "hnsw-sq8"
    if memory_budget is None:
        return preferred
    for kind in (preferred, "ivfpq"):
        if estimate_bytes(kind, count, dim) <= memory_budget:
            return kind
    need = estimate_bytes("ivfpq", count, dim) / 1e6
    raise InputError(f"--memory-budget: {count} vectors need at least {need:.0f} MB even "
                     "compressed (ivfpq)")


def segment_index_type(size: int, total: int, requested: str, exact_max: int = EXACT_MAX, *,
                       memory_budget: int | None = None, dim: int = 384) -> str:
    """The vector index type of a segment of `size` vectors in an index of `total`.

    `requested` "auto": while the whole index is within `exact_max` every segment is
    exact, as one index of that size would be; past it, segments above
    `SEGMENT_EXACT_MAX` get the approximate index `choose_index_type` picks for their
    size, so the vectors a query scans exactly stay bounded (fewer than ten small
    segments a tier, see `merging.MergePolicy`). Another `requested` type is kept for
    segments above `SEGMENT_EXACT_MAX`; smaller ones are exact ('flat' stays 'flat').
    """
    limit = exact_max if total <= exact_max else min(exact_max, SEGMENT_EXACT_MAX)
    if requested == "auto":
        return choose_index_type(size, limit, memory_budget=memory_budget, dim=dim)
    return requested if size > SEGMENT_EXACT_MAX else "flat"


def estimate_bytes(kind: str, count: int, dim: int = 384) -> int:
    """Memory an index of `kind` holds for `count` vectors: what the budget rule compares.

    Flat keeps the float32 vectors and their keys; HNSW adds about 2*M links of 4 bytes
    at the base layer plus ~10% for upper layers (over one byte a dimension for
    hnsw-sq8); IVF-PQ keeps m code bytes and an 8-byte id a vector. The compressed ones'
    full vectors are read from their file, not held.
    """
    vector = 4 * dim + 8
    graph = int(2 * hnsw_params(count)["M"] * 4 * 1.1)
    if kind == "flat":
        per = vector
    elif kind == "hnsw":
        per = vector + graph
    elif kind == "hnsw-sq8":
        per = dim + 8 + graph
    elif kind == "ivfpq":
        per = ivfpq_params(count, dim)["m"] + 8 + 8
    else:
        per = vector
    return per * count



def passage_index_rule(size: int, total: int, requested: str, exact_max: int = EXACT_MAX, *,
                       passage_exact_max: int = PASSAGE_EXACT_MAX,
                       memory_budget: int | None = None, dim: int = 384
                       ) -> tuple[str, dict[str, Any] | None]:
    """The vector index type of a segment of `size` passages among `total`, and the
    parameters it overrides (None: the type's own): `segment_index_type` with the exact
    limit lowered to `passage_exact_max` and a wider HNSW beam (`PASSAGE_EF_SEARCH`),
    both under `requested` "auto" only."""
    if requested != "auto":
        return segment_index_type(size, total, requested, exact_max, dim=dim), None
    kind = segment_index_type(size, max(size, total), "auto", min(exact_max, passage_exact_max),
                              memory_budget=memory_budget, dim=dim)
    if kind in ("hnsw", "hnsw-sq8"):
        return kind, {"efSearch": max(PASSAGE_EF_SEARCH, hnsw_params(size)["efSearch"])}
    return kind, None


def hnsw_params(count: int) -> dict[str, Any]:
    """HNSW graph degree and beam widths by corpus size.

    Up to 200k vectors: M=32, efConstruction 200, efSearch 64 (recall@10 0.986-0.996 at
    80k, 0.35 ms). Beyond, the build is what binds: efConstruction 200 took 819 s at 1M
    on 2 cores, 64 took 223 s, and the thinner graph is made up at search time:
    efSearch 200 gave recall@10 0.983 at 0.60 ms p50 on 1M real-derived vectors with dev
    query texts (efSearch 128: 0.969, 0.40 ms). The graph costs 2*M*4 = 256 bytes a vector
    beyond the vectors themselves.
    """
    if count <= LARGE_HNSW:
        return {"M": 32, "efConstruction": 200, "efSearch": 64}
    return {"M": 32, "efConstruction": 64, "efSearch": 200}


def ivf_params(count: int) -> dict[str, Any]:
    """IVF list count and probes.

    nlist ~ 4*sqrt(n) is FAISS's usual starting point; k-means needs about 39 training
    points per list to be stable, which caps nlist on small corpora. Probing 1/8 of the
    lists (at least 8) measured recall@10 0.958 on 5.8k dev papers (nlist 146) and 0.999
    on 79k (nlist 1125), held-out papers as queries.
    """
    nlist = max(1, min(int(4 * math.sqrt(max(count, 1))), count // 39))
    return {"nlist": nlist, "nprobe": min(nlist, max(8, nlist // 8))}


def ivfpq_params(count: int, dim: int = 384) -> dict[str, Any]:
    """IVF-PQ for the compressed index, and how deep its candidates are re-ranked.

    m=48 sub-quantisers of 8 bits (8 dimensions each at 384-d) keep 48 bytes a vector.
    Measured on 1M real-derived vectors (nlist 4096): probing 64 lists and re-ranking the
    best 200 candidates exactly gave recall@10 0.962 at 0.8 ms on one thread; 100
    candidates 0.951, 32 lists 0.934. Smaller corpora need a larger share of their
    lists: on 20k dev papers (nlist 507) 16 probes gave 0.939, 32 gave 0.975.
    """
    nlist = max(1, min(int(4 * math.sqrt(max(count, 1))), count // 39))
    m = max(d for d in range(1, 49) if dim % d == 0)
    return {"nlist": nlist, "m": m, "nprobe": min(nlist, max(32, nlist // 64)), "rerank": 200}


def rerank_depth(kind: str, k: int, params: dict[str, Any]) -> int:
    """How many candidates a compressed index re-ranks exactly for a top-`k` search.

    hnsw-sq8: max(50, 2k). On 300k dev-derived vectors, efSearch 200: the codes' own
    top 10 had recall@10 0.985, re-ranking 50 gave 0.992 and 100 no more; 50 full
    vectors cost about 0.05 ms to read and score. ivfpq: its `rerank` parameter (200),
    as its 48-byte codes lose far more (see `ivfpq_params`).
    """
    if kind == "hnsw-sq8":
        return max(50, 2 * k)
    return max(k, int(params.get("rerank", 200)))


def filtered_ef(depth: int, count: int, admitted: int, ef: int) -> int:
    """efSearch for a graph search of `depth` labels among `count` vectors of which a
    filter admits `admitted`: a filtered HNSW search walks the whole graph but keeps only
    admitted nodes, so it must visit about depth/share of them. Measured on a 1M hnsw-sq8
    segment (depth 100): 2% admitted needed 200 to fill 50 hits, 0.5% needed 1,000, 0.2%
    4,000 (3.4 ms at 1,000, 11-23 ms at 4,000); depth / (20 x share) follows that, from
    `ef` up to 4,096."""
    share = max(admitted, 1) / max(count, 1)
    return int(min(4096, max(ef, math.ceil(depth / (20 * share)))))


def search_threads(queries: int, cores: int) -> int:
    """Threads for one FAISS search call.

    A single query gains nothing from a second thread and, with torch's own OpenMP pool
    still spinning after encoding, two pools fight for two cores (measured: 36 ms instead
    of 18 ms end to end). Batches of queries split across cores well.
    """
    return 1 if queries < 16 else max(1, cores)
