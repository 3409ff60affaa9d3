"""The local BM25 index: Lucene's BM25 by hand; over segments with deletions, and merged,
the same scores as one build of the live papers; the same keys as the vector index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedsearch import SearchEngine
from embedsearch.storage.local import LocalView
from embedsearch.storage.local.lexical import Postings
from embedsearch.storage.local.lexical_search import LexicalSearch

LORVP = "000_ae22c05437d8edef:1"


def test_lexical_and_vector_stores_agree_after_updates(seed_copy: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    engine.add([{"id": "xen", "abstract": "Xenobots are reconfigurable organisms."}])
    assert engine.search("xenobots", k=1, mode="lexical")[0].paper.id == "xen"
    engine.remove(["xen", LORVP])
    reopened = SearchEngine.open(seed_copy)
    for live in (engine, reopened):
        with live.snapshot() as view:
            assert isinstance(view, LocalView) and view.check() == []
            for segment in view.segments:
                assert np.array_equal(segment.vectors.keys(), segment.lexical.keys())
        assert live.search("xenobots", k=5, mode="lexical") == []
        assert LORVP not in {h.paper.id for h in live.search("visual prompting", k=37,
                                                                mode="lexical")}


def test_lexical_index_scores_like_bm25() -> None:
    texts = ["apple banana", "apple apple cherry", "banana cherry durian"]
    index = LexicalSearch([(Postings.build(np.array([1, 2, 3]), texts), None)])
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


def _corpus() -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(3000)]
    texts = [" ".join(rng.choice(words, int(rng.integers(5, 60)))) for _ in range(3000)]
    return np.arange(1, 3001), texts


QUERIES = ("w1 w2 w3", "w500 w77", "w9 w10", "w1 w2 w2 w2")


def test_bm25_statistics_are_summed_over_segments_and_their_deletions() -> None:
    # Three segments with some papers deleted score every live paper as one build of
    # the live papers does: df, paper count and mean length are the live ones of all.
    keys, texts = _corpus()
    cuts = [(0, 1000), (1000, 2200), (2200, 3000)]
    segments = [Postings.build(keys[a:b], texts[a:b]) for a, b in cuts]
    gone = keys[::7]
    masks = [np.isin(index.keys(), gone, invert=True) for index in segments]
    split = LexicalSearch(list(zip(segments, masks)))
    live = np.isin(keys, gone, invert=True)
    whole = LexicalSearch([(Postings.build(keys[live], [t for t, k in zip(texts, live)
                                                            if k]), None)])
    assert len(split) == len(whole) == int(live.sum())
    for query in QUERIES:
        assert np.allclose(split.scores(query)[live], whole.scores(query), atol=1e-5)
        assert not split.scores(query)[~live].any()  # deleted papers score nothing
        assert np.array_equal(split.top(split.scores(query), 10)[1],
                              whole.top(whole.scores(query), 10)[1])
    assert split.idf(["w1", "w77"]) == pytest.approx(whole.idf(["w1", "w77"]))
    # A merge of the segments, in any order, is that one build.
    merged = Postings.merged([(segments[2], masks[2]), (segments[0], masks[0]),
                                  (segments[1], masks[1])])
    assert np.array_equal(merged.keys(), keys[live])
    alone = LexicalSearch([(merged, None)])
    for query in QUERIES:
        assert np.allclose(alone.scores(query), whole.scores(query), atol=1e-5)
