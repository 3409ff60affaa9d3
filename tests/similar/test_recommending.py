"""Recommendations from a library of two topics, one large and one small, over real dev
papers: the default (clusters in turns) hears the small topic that the mean drowns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from embedsearch import Filters, QueryError, SearchEngine
from embedsearch.evaluation.devset import DevSet
from embedsearch.similar.recommending import METHODS, Library, clusters_of, interleave
from tests.conftest import DEV_DATA, CliResult, needs_dev_data

pytestmark = needs_dev_data
BACKGROUND = 3000


@pytest.fixture(scope="module")
def topics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SearchEngine, list[str],
                                                                        list[str]]]:
    """An index of every keyword-tagged dev paper and 3,000 others; the largest keyword
    topic (A), and the topic of at least 10 papers farthest from it (B)."""
    dev = DevSet(DEV_DATA)
    stored = dev.stored_vectors()
    assert stored is not None
    row = {paper.id: i for i, paper in enumerate(dev.papers)}
    queries = [q for q in dev.queries if q.task == "keyword"]
    tagged = sorted({row[i] for q in queries for i in q.relevant})
    rows = tagged + [r for r in range(len(dev.papers)) if r not in set(tagged)][:BACKGROUND]
    engine = SearchEngine.build(tmp_path_factory.mktemp("reco") / "index",
                                [dev.papers[r] for r in rows],
                                vectors=stored[rows].astype(np.float32))
    large = max(queries, key=lambda q: (len(q.relevant), q.qid))
    centre = stored[[row[i] for i in large.relevant]].astype(np.float32).mean(0)
    small = min((q for q in queries if len(q.relevant) >= 10
                 and not set(q.relevant) & set(large.relevant)),
                key=lambda q: float(stored[[row[i] for i in q.relevant]].astype(
                    np.float32).mean(0) @ centre))
    yield engine, sorted(large.relevant), sorted(small.relevant)
    engine.close()


def test_the_clusters_hear_a_small_topic_the_mean_drowns(
        topics: tuple[SearchEngine, list[str], list[str]]) -> None:
    engine, large, small = topics
    library = large[:30] + small[:3]  # ten times as many papers of A as of B
    held_small, held_large = set(small[3:]), set(large[30:])
    ranks: dict[str, tuple[list[int], list[int]]] = {}
    for method in METHODS:
        ids = [hit.paper.id for hit in engine.similar(library, k=200, method=method)]
        assert len(ids) == 200 and not set(ids) & set(library), method
        ranks[method] = ([n for n, i in enumerate(ids, 1) if i in held_small],
                         [n for n, i in enumerate(ids, 1) if i in held_large])
    # The mean points at A: none of B's other papers in its first 200; the clusters
    # give B its slots, and still find A's papers near the top.
    assert ranks["mean"][0] == [] and len(ranks["clusters"][0]) >= 3, ranks
    assert ranks["clusters"][1][0] <= 10, ranks
    default = [hit.paper.id for hit in engine.similar(library, k=20)]
    assert default == [hit.paper.id for hit in engine.similar(library, k=20,
                                                               method="clusters")]


def test_every_method_keeps_filters_and_negatives(
        topics: tuple[SearchEngine, list[str], list[str]]) -> None:
    engine, large, small = topics
    year = engine.get(large[0]).year
    for method in METHODS:
        hits = engine.similar(large[:10], k=10, method=method,
                              filters=Filters.parse(year=str(year)))
        assert hits and all(hit.paper.year == year for hit in hits), method
        unlike = engine.similar(large[:10], k=10, method=method, negatives=small[:5])
        assert not {hit.paper.id for hit in unlike} & set(small[:5]), method
    with pytest.raises(QueryError, match="unknown method"):
        engine.similar(large[:3], method="magic")


def test_given_papers_outside_the_index_rank_by_the_method(
        topics: tuple[SearchEngine, list[str], list[str]], tmp_path: Path) -> None:
    engine, large, small = topics
    given = [engine.get(paper_id) for paper_id in large[:30] + small[:3]]
    outside = [{"id": f"mine:{n}", "title": paper.title} for n, paper in enumerate(given)]
    hits = engine.similar_to_papers(outside, k=20)  # title-only, none in the index by id
    ids = {hit.paper.id for hit in hits}
    assert len(ids) == 20 and not ids & {paper.id for paper in given}  # matched by title


def test_interleaving_and_clustering_rules() -> None:
    first, second = np.arange(10), np.arange(100, 110)
    taken, sources = interleave([first, second], np.array([0.75, 0.25]), 8)
    assert sources.tolist() == [0, 0, 1, 0, 0, 0, 1, 0]  # three slots in four for 0.75
    assert taken.tolist() == [0, 1, 100, 2, 3, 4, 101, 5]
    rng = np.random.default_rng(0)
    apart = np.vstack([rng.normal(size=(6, 16)) + 8 * np.eye(16)[0],
                       rng.normal(size=(4, 16)) + 8 * np.eye(16)[1]]).astype(np.float32)
    apart /= np.linalg.norm(apart, axis=1, keepdims=True)
    labels = clusters_of(apart, 0.55)
    assert len(set(labels[:6].tolist())) == 1 and len(set(labels[6:].tolist())) == 1
    assert labels[0] != labels[6]
    assert Library(apart, np.ones(10, np.float32), apart[:0]).vectors.shape == (10, 16)


def test_a_large_library_is_clustered_by_a_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    from embedsearch.similar import recommending

    monkeypatch.setattr(recommending, "MAX_CLUSTERED", 50)
    rng = np.random.default_rng(1)
    planted = np.repeat(np.arange(3), 40)
    vectors = (rng.normal(size=(120, 16)) + 8 * np.eye(16)[planted]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    labels = clusters_of(vectors, 0.55)
    for topic in range(3):  # every example joins its own topic's cluster
        assert len(set(labels[planted == topic].tolist())) == 1
    assert len(set(labels.tolist())) == 3


def test_each_recommendation_names_its_nearest_examples(
        topics: tuple[SearchEngine, list[str], list[str]]) -> None:
    engine, large, small = topics
    library = large[:30] + small[:3]
    with engine.snapshot() as view:
        held = view.keys_of(library)
        examples = view.vectors(np.array([held[paper_id] for paper_id in library]))
        for method in METHODS:
            for hit in engine.similar(library, k=10, method=method):
                key = view.keys_of([hit.paper.id])[hit.paper.id]
                similarity = examples @ view.vectors(np.array([key]))[0]
                nearest = [library[i] for i in np.argsort(-similarity, kind="stable")[:3]]
                assert [reason.id for reason in hit.because] == nearest, method
                assert hit.because[0].title == engine.get(nearest[0]).title
                assert abs(hit.because[0].similarity - float(similarity.max())) < 1e-4
                assert hit.to_dict()["because"][0]["id"] == nearest[0]
    given = [{"id": f"mine:{n}", "title": engine.get(paper_id).title,
              "abstract": engine.get(paper_id).abstract} for n, paper_id in enumerate(small[:3])]
    outside = engine.similar_to_papers(given, k=3)
    assert all(reason.id.startswith("mine:") for hit in outside for reason in hit.because)
    assert all(not hit.because for hit in engine.search("graphs", k=3))
    assert "because" not in engine.search("graphs", k=1)[0].to_dict()


def test_recommendations_are_grouped_by_the_librarys_clusters(
        topics: tuple[SearchEngine, list[str], list[str]],
        cli: Callable[..., CliResult]) -> None:
    engine, large, small = topics
    library = large[:30] + small[:3]
    hits = engine.similar(library, k=200)
    groups = {hit.group for hit in hits}
    assert None not in groups and len(groups) >= 2
    small_groups = {hit.group for hit in hits if hit.because[0].id in small[:3]}
    large_groups = {hit.group for hit in hits if hit.because[0].id in large[:30]}
    assert small_groups and not small_groups & large_groups  # B's papers are a group apart
    ids = cli("similar", *library, "--index", engine.path, "-k", "20", "--group",
              "--no-evidence", "-q")
    headings = [line for line in ids.out.splitlines() if line.startswith("── ")]
    shown = {hit.group for hit in engine.similar(library, k=20)}
    assert ids.code == 0 and len(headings) == len(shown)
    assert {line[3:].rsplit(" (", 1)[0] for line in headings} == shown
