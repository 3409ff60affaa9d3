"""What a reader sees of a hit: a score that orders the hits and reads on the cosine
scale (the cosine itself for dense search and recommendations, the ranking moment-matched
to its candidates' cosines for hybrid and lexical), the cosine under its own name,
`min_score` in every face, the paper's fields on the hit itself, and lists of hits and
papers that print briefly. (That every face shows the score best first:
test_score_order.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from embedsearch import Hit, SearchEngine
from embedsearch.server import create_app
from tests.conftest import CliResult

QUERY = "visual prompting for pre-trained image models"


def test_the_score_orders_on_the_cosine_scale_and_similarity_is_the_cosine(
        seed_engine: SearchEngine) -> None:
    vector = seed_engine.encoder.encode_queries([QUERY])[0]
    for mode in ("hybrid", "dense", "lexical"):
        hits = seed_engine.search(QUERY, k=8, mode=mode)
        with seed_engine.snapshot() as view:
            keys = view.keys_of([hit.id for hit in hits])
            stored = view.vectors(np.array([keys[hit.id] for hit in hits]))
        assert np.allclose([hit.similarity for hit in hits], stored @ vector, atol=1e-4), mode
        ranked = [hit.score for hit in hits]
        assert ranked == sorted(ranked, reverse=True), mode
        if mode == "dense":
            assert ranked == [hit.similarity for hit in hits]
    # k=38 ranks the whole seed index, every paper a candidate: the scores then have the
    # mean and spread of the cosines in Fisher's z (moment matching in artanh), within
    # (-1, 1), and a paper ranked up by the words it shares scores above its cosine.
    hybrid = seed_engine.search(QUERY, k=38)
    scores = np.array([hit.score for hit in hybrid])
    cosines = np.array([hit.similarity for hit in hybrid], dtype=np.float64)
    assert len(hybrid) == 38 and not np.allclose(scores, cosines, atol=1e-3)
    assert np.isclose(np.arctanh(scores).mean(), np.arctanh(cosines).mean(), atol=1e-4)
    assert np.isclose(np.arctanh(scores).std(), np.arctanh(cosines).std(), atol=1e-4)
    assert -1 < scores.min() and scores.max() < 1
    assert any(hit.score > hit.similarity for hit in hybrid[:5])  # type: ignore[operator]


def test_min_score_keeps_the_hits_at_least_that_alike(
        seed_engine: SearchEngine, cli: Callable[..., CliResult], seed_index: Path) -> None:
    every = seed_engine.search(QUERY, k=20)
    floor = sorted(hit.score for hit in every)[-5]  # the fifth best score
    kept = seed_engine.search(QUERY, k=20, min_score=floor)
    assert [hit.id for hit in kept] == [hit.id for hit in every if hit.score >= floor]
    assert [hit.rank for hit in kept] == list(range(1, len(kept) + 1)) and len(kept) == 5
    assert seed_engine.search(QUERY, k=20, min_score=0.99) == []
    like = seed_engine.similar(every[0].id, k=10, min_score=floor)
    assert like and all(hit.score >= floor for hit in like)
    printed = cli("search", QUERY, "--index", seed_index, "-k", "20", "--min-score",
                  str(floor), "--json").json_lines()
    assert [hit["id"] for hit in printed] == [hit.id for hit in kept]
    with TestClient(create_app(seed_engine, compute_map=False),
                    base_url="http://localhost") as client:
        answer = client.get("/search", params={"q": QUERY, "k": 20, "min_score": floor})
        assert [hit["id"] for hit in answer.json()["hits"]] == [hit.id for hit in kept]
        refused = client.get("/search", params={"q": QUERY, "min_score": 2})
        assert refused.status_code == 422 and refused.json()["parameter"] == "min_score"


def test_a_hit_has_its_papers_fields_and_lists_print_briefly(
        seed_engine: SearchEngine) -> None:
    hits = seed_engine.search(QUERY, k=3)
    first = hits[0]
    assert (first.id, first.title, first.year, first.venue, first.abstract) == (
        first.paper.id, first.paper.title, first.paper.year, first.paper.venue,
        first.paper.abstract)
    assert {"id", "title", "year"} <= set(dir(first))
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        first.nonsense  # noqa: B018
    table = repr(hits).splitlines()
    assert table[0].split() == ["rank", "score", "id", "title"] and len(table) == 4
    assert all(len(line) <= 100 for line in table)
    assert first.paper.abstract not in repr(hits) and first.id in table[1]
    assert repr(first.paper).count("\n") == 0 and len(repr(first.paper)) < 140
    assert isinstance(first, Hit) and str(hits) == repr(hits)
