"""Vector indexes held against exact NumPy search: recall, filters, persistence, and the
tombstones of indexes written before segments."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedsearch import InputError
from embedsearch.storage.exact import exact_search
from embedsearch.storage.local.vectors import choose_index_type, create_index, load_index
from embedsearch.storage.local.vectors.base import Allowed
from embedsearch.storage.local.vectors.tuning import EXACT_MAX, estimate_bytes, ivf_params
from tests.conftest import dev_vectors, needs_dev_data

TYPES = ["flat", "hnsw", "hnsw-sq8", "ivf"]
# ivfpq trains 256-centroid codebooks: it needs ~10k vectors, and 6 dimensions a code
# byte at the 48 dimensions of the synthetic vectors here.
PQ_COUNT = 12_000
PARAMS: dict[str, dict[str, int]] = {"ivfpq": {"m": 8}}


def clustered(count: int, dim: int = 48, seed: int = 0) -> np.ndarray:
    """Unit vectors around 40 centres: shaped like text embeddings, unlike uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim))
    points = centres[rng.integers(0, 40, count)] + 0.45 * rng.standard_normal((count, dim))
    points = points.astype(np.float32)
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(found, truth)]))


def test_exact_search_reference() -> None:
    vectors = np.eye(4, dtype=np.float32)
    keys = np.array([10, 11, 12, 13], dtype=np.int64)
    query = np.array([[0.9, 0.1, 0.0, 0.0]], dtype=np.float32)
    scores, found = exact_search(vectors, keys, query, 6)
    assert found[0, :2].tolist() == [10, 11] and found[0, 4:].tolist() == [-1, -1]
    assert found[0, 2:4].tolist() == [12, 13]  # equal scores: ascending key
    assert np.isclose(scores[0, 0], 0.9) and np.isneginf(scores[0, 5])


def test_auto_choice_follows_the_size_and_memory_rules() -> None:
    assert choose_index_type(EXACT_MAX) == "flat"
    assert choose_index_type(EXACT_MAX + 1) == "hnsw-sq8"
    assert choose_index_type(100, exact_max=50) == "hnsw-sq8"
    million = 1_000_000
    assert estimate_bytes("ivfpq", million) <= 100 * million < estimate_bytes("flat", million)
    assert estimate_bytes("hnsw-sq8", million) < 0.4 * estimate_bytes("hnsw", million)
    assert choose_index_type(million, memory_budget=4 * 10**9) == "hnsw-sq8"
    assert choose_index_type(million, memory_budget=10**9) == "hnsw-sq8"
    assert choose_index_type(million, memory_budget=5 * 10**8) == "ivfpq"
    with pytest.raises(InputError, match="--memory-budget"):
        choose_index_type(million, memory_budget=10**6)
    assert create_index("auto", 8, 10).kind == "flat"
    assert ivf_params(100)["nlist"] == 2  # k-means needs ~39 points per list


@pytest.mark.parametrize("kind", TYPES + ["ivfpq"])
def test_filters_return_k_admissible_hits(kind: str) -> None:
    vectors = clustered(PQ_COUNT if kind == "ivfpq" else 4000, seed=1)
    keys = np.arange(len(vectors), dtype=np.int64)
    index = create_index(kind, vectors.shape[1], len(keys), PARAMS.get(kind))
    index.add(keys, vectors)
    queries = vectors[:20]
    for allowed in (keys[:4000:400], keys[::2]):  # tiny subset (exact path) and a large one
        _, found = index.search(queries, 10, allowed=allowed)
        assert (found >= 0).all() and set(found.ravel()) <= set(allowed.tolist())
        _, truth = exact_search(vectors[allowed], allowed, queries, 10)
        assert recall(found, truth) >= 0.9
    _, found = index.search(queries, 10, allowed=keys[:3], exclude=keys[:1])
    assert [set(row[:2]) for row in found] == [{1, 2}] * 20 and (found[:, 2:] == -1).all()


def test_a_compressed_graph_holds_codes_and_reads_its_vectors_only_to_rerank(
        tmp_path: Path) -> None:
    vectors = clustered(3000, dim=256, seed=4)
    keys = np.arange(0, 6000, 2, dtype=np.int64)  # keys are not rows
    index = create_index("hnsw-sq8", vectors.shape[1], len(keys))
    index.add(keys, vectors)
    index.save(tmp_path)
    loaded = load_index(tmp_path, index.meta(), vectors.shape[1])
    held = getattr(loaded, "memory_bytes")()
    assert held < vectors.nbytes  # the float vectors stay in their file
    scores, found = loaded.search(vectors[:20], 10)
    truth_scores, truth = exact_search(vectors, keys, vectors[:20], 10)
    assert recall(found, truth) >= 0.95 and np.array_equal(found[:, 0], keys[:20])
    assert np.allclose(scores[:, 0], truth_scores[:, 0], atol=1e-6)  # scores are exact
    assert np.allclose(loaded.reconstruct(keys[[7, 3]]), vectors[[7, 3]])


def test_a_compressed_graph_filtered_to_a_far_cluster_still_finds_the_best_admitted(
        tmp_path: Path) -> None:
    # A filter admitting a few papers far from the query has every admitted code
    # scored; one admitting more than `exact_subset_limit` walks the graph wider
    # (`filtered_ef`). Each answer is held against exact search.
    vectors = clustered(45_000, seed=5)
    keys = np.arange(45_000, dtype=np.int64) * 3
    index = create_index("hnsw-sq8", vectors.shape[1], len(keys))
    index.add(keys, vectors)
    index.save(tmp_path)
    loaded = load_index(tmp_path, index.meta(), vectors.shape[1])
    queries = vectors[:20]
    nearest = vectors @ vectors[0]
    far = keys[np.argsort(nearest)[:3000]]  # the papers least like the first query
    for allowed in (far, far[:300], keys[::2]):
        subset = Allowed(allowed)
        for _ in range(2):  # the second search reuses the selector the first derived
            scores, found = loaded.search(queries, 10, allowed=subset, exclude=allowed[:2])
            truth_scores, truth = exact_search(vectors[allowed // 3][2:], allowed[2:],
                                               queries, 10)
            assert (found >= 0).all() and set(found.ravel()) <= set(allowed[2:].tolist())
            assert recall(found, truth) >= 0.9
            assert np.allclose(scores[:, 0], truth_scores[:, 0], atol=1e-6)


def test_tombstones_an_index_before_segments_left_are_never_returned(tmp_path: Path) -> None:
    """Formats 1 and 2 removed in place: an HNSW graph kept removed vectors, and only the
    keys file said which are live. Such files become a segment as they are."""
    vectors = clustered(1000, seed=2)
    keys = np.arange(1000, dtype=np.int64)
    index = create_index("hnsw", vectors.shape[1], len(keys))
    index.add(keys, vectors)
    index.save(tmp_path)
    np.save(tmp_path / "keys.npy", keys[100:])  # what a format-2 remove of 0..99 wrote
    loaded = load_index(tmp_path, index.meta(), vectors.shape[1])
    assert len(loaded) == 900 and np.array_equal(loaded.keys(), keys[100:])
    _, found = loaded.search(vectors[:100], 5)
    assert not (set(found.ravel()) & set(range(100))) and (found >= 0).all()
    assert np.allclose(loaded.reconstruct(keys[500:505]), vectors[500:505])


@pytest.mark.parametrize("kind", TYPES + ["ivfpq"])
def test_save_and_load_roundtrip(kind: str, tmp_path: Path) -> None:
    vectors = clustered(PQ_COUNT if kind == "ivfpq" else 2000, seed=3)
    keys = np.arange(5, 5 + len(vectors), dtype=np.int64)
    index = create_index(kind, vectors.shape[1], len(keys), PARAMS.get(kind))
    index.add(keys, vectors)
    names = index.save(tmp_path)
    assert sorted(names) == sorted(p.name for p in tmp_path.iterdir())
    loaded = load_index(tmp_path, index.meta(), vectors.shape[1])
    assert np.array_equal(index.search(vectors[:10], 5)[1], loaded.search(vectors[:10], 5)[1])
    assert np.allclose(loaded.reconstruct(keys[:3]), vectors[:3], atol=1e-6)


@needs_dev_data
@pytest.mark.data
@pytest.mark.parametrize(("kind", "minimum"),
                         [("flat", 1.0), ("hnsw", 0.97), ("hnsw-sq8", 0.97), ("ivf", 0.95),
                          pytest.param("ivfpq", 0.95, marks=pytest.mark.slow)])
def test_recall_against_exact_on_real_embeddings(kind: str, minimum: float) -> None:
    vectors = dev_vectors(PQ_COUNT + 200 if kind == "ivfpq" else 6000)
    keys = np.arange(len(vectors), dtype=np.int64)
    rng = np.random.default_rng(0)
    sample = rng.choice(len(vectors), 200, replace=False)
    # Queries are held-out papers: each searches the rest.
    corpus = np.setdiff1d(keys, sample)
    index = create_index(kind, vectors.shape[1], len(corpus))
    index.add(corpus, vectors[corpus])
    _, found = index.search(vectors[sample], 10)
    _, truth = exact_search(vectors[corpus], corpus, vectors[sample], 10)
    assert recall(found, truth) >= minimum
