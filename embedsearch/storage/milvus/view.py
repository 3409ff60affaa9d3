"""Reading a Milvus-backed index: `MilvusView`, one generation open for reading.

Every read asks for Strong consistency: otherwise a paper just inserted is not yet
visible (measured in Lite). Milvus's filtered HNSW search misses papers and can return
fewer hits than asked even when more pass the filter, so a narrow filter is ranked
exactly and a short answer is asked again more widely (see `MilvusView.dense`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...filters import Filters
from ...papers import Paper
from ...text.words import WordCounts
from ..base import Ranked, View, WordStatistics
from ..directory import Lease, Manifest
from ..exact import EXACT_SUBSET_MAX, exact_search
from .connection import Connection
from .schema import ADDED, filter_expression, in_list, paper_of, stems

__all__ = ["TOPK_MAX", "MilvusView", "physical_name"]

#: The most hits one Milvus search returns (its `topk` limit).
TOPK_MAX = 16_384
_BATCH = 1_000  # keys an `in [...]` filter lists
_RETRIES = 3  # wider searches before the exact ranking
#: A filter that at most this many papers pass is ranked exactly over their vectors,
#: fetched at once. Smaller than `exact.EXACT_SUBSET_MAX`, which bounds the exact
#: fallback after HNSW came up short: here the vectors cross the network first.
_EXACT_SMALL = 2_000
#: HNSW's search breadth under a filter. Measured in Lite on 5,000 dev papers, filters
#: passing 54, 360 and 1,319 of them: recall@10 0.47, 0.85, 0.93 at ef 64; 0.997, 1.0,
#: 1.0 at ef 1024, 4.4 ms p50 (3.6 at ef 64).
_FILTERED_EF = 1_024
_EF_MAX = 65_536
_STRONG = "Strong"


def physical_name(manifest: Manifest) -> str:
    """The collection `manifest`'s data is in (its alias, for a manifest without one)."""
    settings = manifest.storage.settings
    return str(settings.get("physical", settings["collection"]))


def _hits(result: Any) -> list[tuple[float, int]]:
    return [(float(hit["distance"]), int(hit["key"])) for hit in result[0]]


def _ranked(hits: Iterable[tuple[float, int]], depth: int) -> Ranked:
    """(scores, keys) best first, ties by key as the local index breaks them."""
    pairs = list(hits)
    scores = np.array([s for s, _ in pairs], dtype=np.float32)
    keys = np.array([k for _, k in pairs], dtype=np.int64)
    order = np.lexsort((keys, -scores))[:depth]
    return scores[order], keys[order]


class MilvusView(View):
    """One generation of a Milvus-backed index, open for reading."""

    def __init__(self, manifest: Manifest, connection: Connection, words: WordCounts,
                 lease: Lease) -> None:
        self.manifest, self.lease = manifest, lease
        self._connection, self._words, self._name = connection, words, physical_name(manifest)
        self._ef = int(manifest.index.params.get("efSearch", 64))
        self._subsets: tuple[Filters, tuple[int, NDArray[np.int64] | None,
                                            NDArray[np.float32]]] | None = None
        self._closed = False

    def __len__(self) -> int:
        return self.manifest.count

    def keys(self) -> NDArray[np.int64]:
        keys = [int(row["key"]) for row in self._connection.every(self._name, "", ["key"])]
        return np.sort(np.array(keys, dtype=np.int64))

    def keys_of(self, ids: Iterable[str]) -> dict[str, int]:
        return self._connection.oldest(self._name, "paper_id", ids)

    def keys_by_title(self, titles: Iterable[str]) -> dict[str, int]:
        return self._connection.oldest(self._name, "title_key", titles)

    def papers(self, keys: Iterable[int]) -> dict[int, Paper]:
        rows = self._connection.rows(self._name, "key", (int(k) for k in keys),
                                     ["key", "record"])
        return {int(row["key"]): paper_of(row["record"]) for row in rows}

    def count(self, filters: Filters) -> int:
        return self._subset(filters)[0] if filters else len(self)

    def added(self, keys: Iterable[int]) -> dict[int, str]:
        rows = self._connection.rows(self._name, "key", (int(k) for k in keys),
                                     ["key", "record"])
        return {int(row["key"]): str(row["record"].get(ADDED, "")) for row in rows}

    def vectors(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        wanted = [int(k) for k in keys]
        found = {int(row["key"]): row["dense"] for row in
                 self._connection.rows(self._name, "key", wanted, ["key", "dense"])}
        missing = [k for k in wanted if k not in found]
        if missing:
            raise KeyError(f"keys not in the index: {missing[:10]}")
        dim = self.manifest.model.dim
        return np.array([found[k] for k in wanted], dtype=np.float32).reshape(len(wanted), dim)

    def search_field(self, field: str, data: Any, limit: int, expr: str,
                     params: dict[str, Any]) -> list[tuple[float, int]]:
        """One Milvus search of `field` ("dense" or "sparse"): (score, key) pairs."""
        return _hits(self._connection.call(
            "search", self._name, data=[data], anns_field=field, limit=limit, filter=expr,
            output_fields=["key"], search_params=params, consistency_level=_STRONG))

    def dense(self, vector: NDArray[np.float32], depth: int, filters: Filters | None,
              exclude: NDArray[np.int64]) -> Ranked:
        """The best `depth` by inner product.

        HNSW under a filter misses papers: a filter that at most `_EXACT_SMALL` papers
        pass is ranked exactly over their vectors (fetched once per filter), and a
        wider one searched more broadly (`_FILTERED_EF`). HNSW can also stop short, so
        a short answer is asked again more widely (limit and ef x4, up to 3 times), and
        if still short with at most `exact.EXACT_SUBSET_MAX` papers passing, ranked exactly.
        """
        query = np.asarray(vector, dtype=np.float32).ravel()
        subset = self._subset(filters) if filters else None
        if subset is not None and subset[1] is not None:
            return _exact(subset[1], subset[2], query, depth, exclude)
        expr = filter_expression(filters, exclude)
        want = limit = min(depth, TOPK_MAX)
        ef = max(limit, _FILTERED_EF if filters else self._ef)
        hits = self.search_field("dense", query.tolist(), limit, expr,
                                 {"metric_type": "IP", "params": {"ef": ef}})
        if len(hits) < want:
            passing = self._connection.count(self._name, expr)
            want = min(want, passing)
            for _ in range(_RETRIES):
                if len(hits) >= want:
                    break
                limit, ef = min(limit * 4, TOPK_MAX, max(passing, 1)), min(ef * 4, _EF_MAX)
                hits = self.search_field("dense", query.tolist(), max(limit, want), expr,
                                         {"metric_type": "IP",
                                          "params": {"ef": max(ef, limit)}})
            if len(hits) < want and passing <= EXACT_SUBSET_MAX:
                keys, vectors = self._fetch(filter_expression(filters, None))
                return _exact(keys, vectors, query, depth, exclude)
        return _ranked(hits, depth)

    def _subset(self, filters: Filters) -> tuple[int, NDArray[np.int64] | None,
                                                 NDArray[np.float32]]:
        """How many papers `filters` admits and, if few, their keys and vectors;
        remembered for the last filters, as a batch of queries (and the two rankings of
        a hybrid query) share them."""
        cached = self._subsets
        if cached is not None and cached[0] == filters:
            return cached[1]
        expr = filter_expression(filters, None)
        count = self._connection.count(self._name, expr)
        keys: NDArray[np.int64] | None = None
        vectors = np.zeros((0, self.manifest.model.dim), np.float32)
        if count <= _EXACT_SMALL:
            keys, vectors = self._fetch(expr)
        self._subsets = (filters, (count, keys, vectors))
        return count, keys, vectors

    def _fetch(self, expr: str) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """The keys and vectors of the papers `expr` admits."""
        rows = list(self._connection.every(self._name, expr, ["key", "dense"]))
        keys = np.array([int(row["key"]) for row in rows], dtype=np.int64)
        dim = self.manifest.model.dim
        return keys, np.array([row["dense"] for row in rows], np.float32).reshape(len(rows), dim)

    def lexical(self, text: str, depth: int, filters: Filters | None,
                exclude: NDArray[np.int64]) -> Ranked:
        """The best `depth` by Milvus's BM25 over the stems of `text` (see
        `milvus_schema.ANALYZER`). Its sparse inverted index is searched exhaustively
        within the filter, so a short answer means fewer papers match, and unlike
        `dense` it is not asked again (the tests check it against an unfiltered search)."""
        query = stems(self._words.tokenizer, text)
        if not query:  # no words, or stop words only: nothing matches
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        hits = self.search_field("sparse", query, min(depth, TOPK_MAX),
                                 filter_expression(filters, exclude), {"metric_type": "BM25"})
        return _ranked(_bm25(hits), depth)

    def lexical_scores(self, text: str, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        wanted = [int(k) for k in keys]
        found: dict[int, float] = {}
        unique = list(dict.fromkeys(wanted))
        query = stems(self._words.tokenizer, text)
        for start in range(0, len(unique) if query else 0, _BATCH):
            chunk = unique[start:start + _BATCH]
            hits = self.search_field("sparse", query, len(chunk), f"key in {in_list(chunk)}",
                                     {"metric_type": "BM25"})
            found.update((key, score) for score, key in _bm25(hits))
        return np.array([found.get(k, 0.0) for k in wanted], dtype=np.float32)

    @property
    def words(self) -> WordStatistics:
        return self._words

    def check(self) -> list[str]:
        """The collection's rows against the manifest: their count, one row per paper id,
        and the word counts evidence reads (the fingerprint is checked on opening)."""
        ids = [str(row["paper_id"]) for row in
               self._connection.every(self._name, "", ["paper_id"])]
        problems = []
        if len(ids) != self.manifest.count:
            problems.append(f"the Milvus collection holds {len(ids)} papers, the manifest "
                            f"counts {self.manifest.count}")
        if len(set(ids)) != len(ids):
            problems.append(f"the Milvus collection holds {len(ids) - len(set(ids))} "
                            "duplicate rows of a paper id")
        if len(self._words) != self.manifest.count:
            problems.append(f"the word counts ({len(self._words)} papers) disagree with the "
                            f"manifest ({self.manifest.count})")
        return problems

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.lease.release()
            self._connection.release()


def _exact(keys: NDArray[np.int64], vectors: NDArray[np.float32], query: NDArray[np.float32],
           depth: int, exclude: NDArray[np.int64]) -> Ranked:
    """The best `depth` of `vectors` by inner product with `query`, outside `exclude`."""
    if len(exclude):
        kept = ~np.isin(keys, exclude)
        keys, vectors = keys[kept], vectors[kept]
    scores, found = exact_search(vectors, keys, query[None, :], depth)
    valid = found[0] >= 0
    return scores[0][valid], found[0][valid]


def _bm25(hits: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """BM25 scores from a search's distances, positive ones only. A server returns the
    score; Milvus Lite 3.2.2 returns it negated ("smaller is nearer", its convention
    for every metric, undone for IP but not for BM25). BM25 with Lucene's idf is
    positive for any matching paper, so the magnitude is the score either way."""
    return [(abs(score), key) for score, key in hits if score != 0.0]
