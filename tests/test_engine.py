"""The engine end to end on the seed corpus with the real bundled model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from embedsearch import (
    Filters,
    IndexExistsError,
    IndexOptions,
    Paper,
    PaperNotFoundError,
    QueryError,
    SearchEngine,
    read_papers,
)
from embedsearch.encoding import Encoder
from embedsearch.papers import embedding_text
from tests.conftest import contents, snapshot

LORVP = "000_ae22c05437d8edef:1"  # the LoR-VP (low-rank visual prompting) abstract


def test_search_finds_the_paper_by_meaning(seed_engine: SearchEngine) -> None:
    assert seed_engine.search("low-rank visual prompting", k=1)[0].paper.id == LORVP  # hybrid
    hits = seed_engine.search("low-rank visual prompting", k=5, mode="dense")
    assert hits[0].paper.id == LORVP
    assert [hit.rank for hit in hits] == [1, 2, 3, 4, 5]
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True) and -1 <= scores[-1] <= scores[0] <= 1
    # A paraphrase sharing few words still finds it: meaning, not word overlap.
    paraphrase = "tuning a few parameters added to images to adapt a pretrained network"
    assert seed_engine.search(paraphrase, k=3, mode="dense")[0].paper.id == LORVP


def test_scores_are_cosine_similarities(seed_engine: SearchEngine,
                                        seed_files: list[Path]) -> None:
    papers = {paper.id: paper for paper in read_papers(seed_files)}
    encoder = Encoder(backend=seed_engine.info().encoder_backend)
    query = "offline preference-based reinforcement learning"
    hits = seed_engine.search(query, k=38, mode="dense")
    assert len(hits) == 38 and len({hit.paper.id for hit in hits}) == 38
    texts = [embedding_text(papers[hit.paper.id]) for hit in hits]
    vectors = encoder.encode_documents([query] + texts)
    expected = vectors[1:] @ vectors[0]
    assert np.allclose([hit.score for hit in hits], expected, atol=1e-4)
    assert np.allclose([hit.similarity for hit in hits], expected, atol=1e-4)
    hybrid = {h.paper.id: h.similarity for h in seed_engine.search(query, k=38)}
    assert np.allclose([hybrid[h.paper.id] for h in hits], expected, atol=1e-4)


def test_search_many_matches_single_searches(seed_engine: SearchEngine) -> None:
    queries = ["diffusion models for images", "language model retrieval", "bandits"]
    batch = seed_engine.search_many(queries, k=4)
    for query, hits in zip(queries, batch):
        single = seed_engine.search(query, k=4)
        assert [h.paper.id for h in hits] == [h.paper.id for h in single]
        assert np.allclose([h.score for h in hits], [h.score for h in single], atol=1e-5)


def test_similar_uses_the_stored_vector_and_excludes_the_paper(
        seed_engine: SearchEngine) -> None:
    hits = seed_engine.similar(LORVP, k=37)
    ids = [hit.paper.id for hit in hits]
    assert LORVP not in ids and len(ids) == 37
    # Same ranking as searching with the paper's own vector over the other 37 papers.
    keys, vectors, papers = contents(seed_engine)
    own = vectors[[papers[int(key)].id for key in keys].index(LORVP)]
    order = np.argsort(-(vectors @ own))[1:]
    expected = [papers[int(keys[i])].id for i in order]
    assert ids == expected


def test_filters_still_return_k(seed_engine: SearchEngine) -> None:
    everything = Filters.parse(year="2020-2026", venues=["iclr"])
    assert len(seed_engine.search("learning", k=10, filters=everything)) == 10
    assert seed_engine.search("learning", k=10, filters=Filters.parse(year="2024")) == []
    assert seed_engine.search("learning", k=5, filters=Filters.parse(venues=["NeurIPS"])) == []


def test_get_and_unknown_ids(seed_engine: SearchEngine) -> None:
    paper = seed_engine.get(LORVP)
    assert paper.abstract.startswith("Visual prompting") and paper.venue == "ICLR"
    assert LORVP in seed_engine and "nope" not in seed_engine
    with pytest.raises(PaperNotFoundError, match="no paper with id 'nope'"):
        seed_engine.get("nope")
    with pytest.raises(PaperNotFoundError):
        seed_engine.similar("nope")


def test_get_many_answers_by_id_and_leaves_unknown_ids_out(seed_engine: SearchEngine) -> None:
    other = seed_engine.search("spiking neural networks", k=1)[0].paper.id
    found = seed_engine.get_many([other, "nope", LORVP, other])
    assert found == {other: seed_engine.get(other), LORVP: seed_engine.get(LORVP)}
    assert seed_engine.get_many([]) == {}
    with pytest.warns(DeprecationWarning, match="get_many"):
        assert seed_engine.get_papers([LORVP]) == {LORVP: found[LORVP]}


@pytest.mark.parametrize("query", ["", "   ", "\n"])
def test_empty_query_is_refused(seed_engine: SearchEngine, query: str) -> None:
    with pytest.raises(QueryError, match="the query is empty"):
        seed_engine.search(query)


@pytest.mark.parametrize("k", [0, -1, 10_001])
def test_bad_k_is_refused(seed_engine: SearchEngine, k: int) -> None:
    with pytest.raises(QueryError, match="must be an integer from 1") as refused:
        seed_engine.search("graphs", k=k)
    assert refused.value.parameter == "k"
    with pytest.raises(QueryError):
        seed_engine.similar(LORVP, k=k)


def test_add_remove_reopen(seed_copy: Path, seed_files: list[Path], tmp_path: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    before = snapshot(seed_copy)
    assert engine.add_files(seed_files) == 0  # all known: nothing encoded, nothing written
    assert snapshot(seed_copy) == before
    new = {"id": "new-1", "title": "Low-rank prompts for vision transformers",
           "abstract": "We learn low-rank visual prompts that adapt frozen vision "
                       "transformers to new image classification tasks.",
           "year": 2026, "venue": "Test", "keywords": ["prompting"]}
    path = tmp_path / "new.jsonl"
    path.write_text(json.dumps(new) + "\n" + json.dumps({"id": LORVP, "abstract": "x"}) + "\n")
    assert engine.add_files([path]) == 1
    assert len(engine) == 39
    top = [hit.paper.id for hit in engine.search("low-rank visual prompting", k=2)]
    assert set(top) == {LORVP, "new-1"}
    assert [h.paper.id for h in engine.search("prompts", k=5,
                                              filters=Filters.parse(keywords=["Prompting"]))] \
        == ["new-1"]
    assert engine.remove([LORVP, "new-1"]) == 2
    assert len(engine) == 37
    with pytest.raises(PaperNotFoundError):
        engine.remove(["002_dac742868d0dfd5b:1", "missing"])
    assert len(engine) == 37  # all or nothing
    engine.close()
    reopened = SearchEngine.open(seed_copy)
    assert len(reopened) == 37 and reopened.info().count == 37
    assert LORVP not in reopened
    ids = [h.paper.id for h in reopened.search("low-rank visual prompting", k=37)]
    assert LORVP not in ids and "new-1" not in ids and len(ids) == 37
    assert list((seed_copy).glob("g*")) == [seed_copy / "g000003"]  # old generations gone


def test_build_from_records_and_refuse_overwrite(tmp_path: Path) -> None:
    records = [{"abstract": "Transformers for protein folding."},
               Paper(id="p", abstract="Bandit algorithms with regret bounds.", title="Bandits")]
    engine = SearchEngine.build(tmp_path / "mem", records)
    assert [h.paper.id for h in engine.search("protein structure", k=2)] == ["record:1", "p"]
    with pytest.raises(IndexExistsError, match="--overwrite"):
        SearchEngine.build(tmp_path / "mem", records)
    rebuilt = SearchEngine.build(tmp_path / "mem", records[:1], overwrite=True)
    assert len(rebuilt) == 1 and len(SearchEngine.open(tmp_path / "mem")) == 1


def test_fields_choose_what_is_embedded(tmp_path: Path) -> None:
    records = [{"id": "a", "title": "Quantum chemistry", "abstract": "Birds migrate south."},
               {"id": "b", "title": "Bird migration", "abstract": "Molecules and orbitals."}]
    by_abstract = SearchEngine.build(tmp_path / "abs", records, IndexOptions(fields=("abstract",)))
    assert by_abstract.search("bird migration", k=1, mode="dense")[0].paper.id == "a"
    assert by_abstract.info().fields == ("abstract",)
    by_title = SearchEngine.build(tmp_path / "title", records, IndexOptions(fields=("title",)))
    assert by_title.search("bird migration", k=1, mode="dense")[0].paper.id == "b"


def test_auto_index_type_switches_when_the_corpus_grows(seed_files: list[Path],
                                                         tmp_path: Path) -> None:
    engine = SearchEngine.build_from_files(tmp_path / "grow", seed_files,
                                           IndexOptions(exact_max=38))
    assert engine.info().index_type == "flat"
    exact = [h.paper.id for h in engine.search("reinforcement learning exploration", k=5)]
    engine.add([{"id": "extra", "abstract": "Protein language models for enzyme design."}])
    # The added paper is a segment of its own, exact as small segments are; a merge
    # gives the grown index the type its size now calls for.
    assert engine.info().index_type == "flat"
    assert engine.compact() and not engine.compact()
    assert engine.info().index_type == "hnsw-sq8"
    assert SearchEngine.open(tmp_path / "grow").info().index_type == "hnsw-sq8"
    assert [h.paper.id for h in engine.search("reinforcement learning exploration", k=5)] \
        == exact
    chosen = SearchEngine.build_from_files(tmp_path / "fixed", seed_files,
                                           IndexOptions(index_type="ivf"))
    assert chosen.info().index_type == "ivf"
