"""The local BM25 index: Lucene's BM25 by hand, updates equal to a rebuild, the same keys
as the vector index after updates."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from embedsearch import SearchEngine
from embedsearch.storage.local import LocalView
from embedsearch.storage.local.lexical import LexicalIndex

LORVP = "000_ae22c05437d8edef:1"


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
