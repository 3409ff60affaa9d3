"""Search modes, fusion, evidence, diversity and query by example, on real indexes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedsearch import IndexOptions, QueryError, SearchEngine
from embedsearch.search.retrieval import MAX_QUERY_CHARS
from embedsearch.text.words import BOILERPLATE, FUNCTION_WORDS
from tests.conftest import DEV_PAPERS, dev_records, needs_dev_data

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


def long_query(engine: SearchEngine, chars: int) -> str:
    """Real text of `chars` characters: the seed papers' titles and abstracts in turn."""
    with engine.snapshot() as view:
        papers = view.papers(int(key) for key in view.keys())
    text = " ".join(f"{paper.title}. {paper.abstract}" for paper in papers.values())
    while len(text) < chars:
        text += " " + text
    return text[:chars - 1].rstrip().ljust(chars - 1, ".") + "."


def test_a_query_up_to_the_limit_is_answered_and_one_past_it_refused_with_both_lengths(
        seed_engine: SearchEngine) -> None:
    longest = long_query(seed_engine, MAX_QUERY_CHARS)
    assert len(longest) == MAX_QUERY_CHARS
    assert len(seed_engine.search(longest, k=5)) == 5
    with pytest.raises(QueryError) as refused:
        seed_engine.search(longest + "!", k=5)
    assert str(refused.value) == (f"the query is {MAX_QUERY_CHARS + 1:,} characters long; "
                                  f"the limit is {MAX_QUERY_CHARS:,}: shorten it")
    assert refused.value.parameter == "query"


@needs_dev_data
def test_the_limit_holds_the_longest_title_and_abstract_of_the_dev_corpus() -> None:
    import gzip
    import json

    with gzip.open(DEV_PAPERS, "rt", encoding="utf-8") as handle:
        longest = max(len(f"{record['title']}. {record['abstract']}")
                      for record in map(json.loads, handle))
    assert 16_000 < longest <= MAX_QUERY_CHARS  # 16,297 when written


def test_evidence_never_marks_function_words(seed_engine: SearchEngine) -> None:
    """A short query's words, "which" and "we" among them, and a pasted 10,000-character
    text (read as a passage: its content words only) mark no function word."""
    short = seed_engine.search("which language models do we use across many languages", k=10)
    assert any(hit.evidence_terms for hit in short)
    long = seed_engine.search(long_query(seed_engine, 10_000), k=20, mode="lexical")
    assert sum(bool(hit.evidence_terms) for hit in long) >= 10
    for hit in short:
        assert not {term.lower() for term in hit.evidence_terms} & FUNCTION_WORDS, hit.id
    for hit in long:
        assert not {term.lower() for term in hit.evidence_terms} & BOILERPLATE, hit.id
        assert all(term in hit.evidence for term in hit.evidence_terms)


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
    engine = SearchEngine.build(tmp_path / "dev", records, IndexOptions(index_type="hnsw"))
    titles = [str(r["title"]) for r in records[::50]]
    for mode in ("hybrid", "dense", "lexical"):
        found = engine.search_many(titles, k=10, mode=mode)
        ranks = [next((h.rank for h in hits if h.paper.title == title), None)
                 for hits, title in zip(found, titles)]
        assert sum(rank == 1 for rank in ranks) >= 0.7 * len(titles), mode
        for hits in found:
            for hit in hits:
                assert hit.evidence and hit.evidence in _collapsed(hit.paper.abstract)
