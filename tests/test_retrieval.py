"""Search modes, fusion, evidence, diversity and query by example, on real indexes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedsearch import QueryError, SearchEngine
from tests.conftest import dev_records, needs_dev_data

LORVP = "000_ae22c05437d8edef:1"


SPIKING = "000_ae22c05437d8edef:15"  # the spiking neural network quantisation abstract


def _collapsed(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_every_mode_ranks_and_explains(seed_engine: SearchEngine, mode: str) -> None:
    hits = seed_engine.search("visual prompting", k=5, mode=mode)
    assert hits[0].paper.id == LORVP
    ranked = [hit.score for hit in hits]
    assert ranked == sorted(ranked, reverse=True)
    # The similarity is the cosine of query and paper in every mode, lexical too.
    vector = seed_engine.encoder.encode_queries(["visual prompting"])[0]
    with seed_engine.snapshot() as view:
        keys = view.keys_of([hit.id for hit in hits])
        stored = view.vectors(np.array([keys[hit.id] for hit in hits]))
    assert np.allclose([hit.similarity for hit in hits], stored @ vector, atol=1e-4)
    for hit in hits:
        assert hit.evidence and hit.evidence in _collapsed(hit.paper.abstract)
        assert all(term.lower() in hit.evidence.lower() for term in hit.evidence_terms)
    assert (hits[0].lexical_score is None) == (mode == "dense")


def test_lexical_needs_shared_words_and_dense_does_not(seed_engine: SearchEngine) -> None:
    # Words no abstract contains: lexical finds nothing, dense and hybrid still answer.
    assert seed_engine.search("zyxwvut qqqq", k=5, mode="lexical") == []
    assert len(seed_engine.search("zyxwvut qqqq", k=5, mode="dense")) == 5
    assert len(seed_engine.search("zyxwvut qqqq", k=5)) == 5
    spiking = seed_engine.search("spiking neural networks quantization", k=3, mode="lexical")
    assert spiking[0].paper.id == SPIKING
    assert any(t.lower().startswith("spik") for t in spiking[0].evidence_terms)  # stems match


def test_unknown_mode_is_refused(seed_engine: SearchEngine) -> None:
    with pytest.raises(QueryError, match="must be one of hybrid, dense, lexical") as refused:
        seed_engine.search("graphs", mode="fuzzy")
    assert refused.value.parameter == "mode"


def test_hybrid_search_is_deterministic(seed_engine: SearchEngine) -> None:
    runs = [[(h.paper.id, h.score) for h in seed_engine.search("language model retrieval",
                                                               k=10)] for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_query_by_example(seed_engine: SearchEngine) -> None:
    alone = [h.paper.id for h in seed_engine.search("quantization", k=5, mode="dense")]
    guided = [h.paper.id for h in seed_engine.search("quantization", k=5, mode="dense",
                                                     positives=[LORVP])]
    assert LORVP not in guided and guided != alone  # the example pulls, and is not returned
    plain = seed_engine.similar([LORVP, SPIKING], k=37)
    assert {LORVP, SPIKING}.isdisjoint(h.paper.id for h in plain) and len(plain) == 36
    # A negative example moves its neighbours down.
    nearest = seed_engine.similar(SPIKING, k=3)[0].paper.id
    pushed = seed_engine.similar([SPIKING], k=36, negatives=[nearest])
    assert nearest not in {h.paper.id for h in pushed}
    before = [h.paper.id for h in seed_engine.similar(SPIKING, k=36)]
    after = [h.paper.id for h in pushed]
    assert after != before[1:] or after[0] != before[1]


@needs_dev_data
@pytest.mark.data
@pytest.mark.slow
def test_modes_on_real_papers(tmp_path: Path) -> None:
    records = dev_records(1500)
    engine = SearchEngine.build(tmp_path / "dev", records, index_type="hnsw")
    titles = [str(r["title"]) for r in records[::50]]
    for mode in ("hybrid", "dense", "lexical"):
        found = engine.search_many(titles, k=10, mode=mode)
        ranks = [next((h.rank for h in hits if h.paper.title == title), None)
                 for hits, title in zip(found, titles)]
        assert sum(rank == 1 for rank in ranks) >= 0.7 * len(titles), mode
        for hits in found:
            for hit in hits:
                assert hit.evidence and hit.evidence in _collapsed(hit.paper.abstract)
