"""Search modes, fusion, evidence, diversity and query by example, on real indexes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedsearch import Filters, QueryError, SearchEngine
from embedsearch.fusion import fuse
from embedsearch.metrics import mrr, ndcg, precision, recall
from embedsearch.storage.local import LocalView
from embedsearch.storage.local.lexical import LexicalIndex

from .conftest import dev_records, needs_dev_data

LORVP = "000_ae22c05437d8edef:1"
SPIKING = "000_ae22c05437d8edef:15"  # the spiking neural network quantisation abstract


def _collapsed(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_every_mode_ranks_and_explains(seed_engine: SearchEngine, mode: str) -> None:
    hits = seed_engine.search("visual prompting", k=5, mode=mode)
    assert hits[0].paper.id == LORVP
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        assert hit.evidence and hit.evidence in _collapsed(hit.paper.abstract)
        assert all(term.lower() in hit.evidence.lower() for term in hit.evidence_terms)
    assert (hits[0].dense_score is None) == (mode == "lexical")
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


def test_fusion_is_stable_and_rewards_agreement() -> None:
    lexical = (np.array([5.0, 3.0, 1.0, 0.0], np.float32), np.array([7, 3, 9, 4]))
    dense = (np.array([0.9, 0.8, 0.7], np.float32), np.array([3, 8, 7]))
    first = fuse(lexical, dense)
    assert all(np.array_equal(a, b) for a, b in zip(first, fuse(lexical, dense)))
    assert set(first[1][:2].tolist()) == {3, 7}  # first in one list, near the top of both
    assert 4 not in first[1]  # a lexical score of 0 is no match
    ties = fuse((np.zeros(0, np.float32), np.zeros(0, np.int64)),
                (np.array([0.5, 0.5], np.float32), np.array([9, 2])))
    assert ties[1].tolist() == [2, 9]  # equal fused scores: by key


def test_hybrid_search_is_deterministic(seed_engine: SearchEngine) -> None:
    runs = [[(h.paper.id, h.score) for h in seed_engine.search("language model retrieval",
                                                               k=10)] for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_filters_hold_in_every_mode(seed_engine: SearchEngine) -> None:
    for mode in ("hybrid", "dense", "lexical"):
        assert seed_engine.search("learning", k=5, mode=mode,
                                  filters=Filters.parse(venues=["NeurIPS"])) == []
        hits = seed_engine.search("learning", k=5, mode=mode,
                                  filters=Filters.parse(year="2025"))
        assert hits and all(h.paper.year == 2025 for h in hits)


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


def test_diverse_keeps_near_duplicates_off_the_page(tmp_path: Path) -> None:
    base = "We train graph neural networks to predict molecular properties from atom bonds."
    records = [{"id": f"dup{i}", "abstract": base + (" " + "Indeed." * i)} for i in range(4)]
    records += [{"id": "other1", "abstract": "Message passing networks for crystal property "
                                              "prediction in materials science."},
                {"id": "other2", "abstract": "Transformers over molecular graphs predict "
                                              "quantum chemical properties."},
                {"id": "far", "abstract": "A study of bird migration across continents."}]
    engine = SearchEngine.build(tmp_path / "dups", records)
    query = "graph neural networks for molecular property prediction"
    plain = [h.paper.id for h in engine.search(query, k=3)]
    diverse = [h.paper.id for h in engine.search(query, k=3, diverse=True)]
    assert sum(i.startswith("dup") for i in plain) == 3
    assert sum(i.startswith("dup") for i in diverse) == 1


def test_lexical_and_vector_stores_agree_after_updates(seed_copy: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    engine.add([{"id": "xen", "abstract": "Xenobots are reconfigurable organisms."}])
    assert engine.search("xenobots", k=1, mode="lexical")[0].paper.id == "xen"
    engine.remove(["xen", LORVP])
    reopened = SearchEngine.open(seed_copy)
    for live in (engine, reopened):
        with live.snapshot() as view:
            assert isinstance(view, LocalView)
            assert np.array_equal(view.parts.vectors.keys(), view.parts.lexical.keys())
        assert live.search("xenobots", k=5, mode="lexical") == []
        assert LORVP not in {h.paper.id for h in live.search("visual prompting", k=37,
                                                                mode="lexical")}


def test_lexical_index_scores_like_bm25() -> None:
    texts = ["apple banana", "apple apple cherry", "banana cherry durian"]
    index = LexicalIndex.build(np.array([1, 2, 3]), texts)
    scores = index.scores("apple")
    # Lucene BM25 by hand: idf = ln(1 + (3 - 2 + .5) / (2 + .5)), k1 = 1.2, b = .75.
    idf = np.log1p(1.5 / 2.5)
    lengths, mean = np.array([2, 3, 3]), 8 / 3
    tf = np.array([1, 2, 0])
    expected = idf * tf / (tf + 1.2 * (0.25 + 0.75 * lengths / mean))
    # A single word has no pairs: its score is the words' BM25 alone.
    assert np.allclose(scores, expected, atol=1e-6)
    assert np.allclose(index.scores("apple", pair_weight=0.0), expected, atol=1e-6)
    assert index.top(scores, 5)[1].tolist() == [2, 1]


def test_metrics_on_a_hand_made_ranking() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    relevant = {"a", "b", "z"}
    assert mrr(ranked, relevant) == 1.0 and mrr(["x", "a"], relevant) == 0.5
    assert mrr(["x"] * 10 + ["a"], relevant) == 0.0  # past the cutoff
    assert recall(ranked, relevant) == pytest.approx(2 / 3)
    assert precision(ranked, relevant) == pytest.approx(0.2)
    ideal = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert ndcg(ranked, relevant) == pytest.approx((1 + 1 / np.log2(4)) / ideal)
    assert ndcg([], relevant) == 0.0 and recall(ranked, set()) == 0.0


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


def test_lexical_updates_equal_a_rebuild() -> None:
    # add merges postings and remove filters them, without re-sorting: same scores as a
    # fresh build of the same papers.
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(3000)]
    texts = [" ".join(rng.choice(words, int(rng.integers(5, 60)))) for _ in range(3000)]
    keys = np.arange(1, 3001)
    grown = LexicalIndex.build(keys[:1000], texts[:1000])
    grown.add(keys[1000:2000], texts[1000:2000])
    grown.add(keys[2000:], texts[2000:])
    whole = LexicalIndex.build(keys, texts)
    gone = set(keys[::7].tolist())
    for query in ("w1 w2 w3", "w500 w77", "w9 w10"):
        assert np.allclose(grown.scores(query), whole.scores(query))
    grown.remove(keys[::7])
    rest = [(k, t) for k, t in zip(keys, texts) if k not in gone]
    rebuilt = LexicalIndex.build(np.array([k for k, _ in rest]), [t for _, t in rest])
    for query in ("w1 w2 w3", "w500 w77", "w9 w10"):
        assert np.allclose(grown.scores(query), rebuilt.scores(query))
