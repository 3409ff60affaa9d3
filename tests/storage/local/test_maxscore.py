"""BM25's best papers found without scoring every posting (`maxscore`) are those of
scoring every posting: on the seed corpus and on the dev corpus split into segments with
deletions, with filters and exclusions, after merges that interleave keys and on
postings written before merges kept rows ascending; a long query keeps its most
weighted terms within the postings budget."""

from __future__ import annotations

import dataclasses

import numpy as np

from embedsearch import SearchEngine
from embedsearch.storage.local import LocalView
from embedsearch.storage.local.lexical import Postings, TermPostings
from embedsearch.storage.local.lexical_search import LexicalSearch
from tests.conftest import dev_records, needs_dev_data


def _assert_same_best(search: LexicalSearch, query: str, depth: int,
                      admitted: np.ndarray | None = None, exclude: np.ndarray | None = None,
                      **options: int) -> None:
    """`best` gives the scores and keys of ranking every row's score (ties may swap keys
    only among the papers tied at the last place)."""
    scores = search.scores(query)
    if admitted is not None:
        scores = np.where(admitted, scores, 0.0).astype(np.float32)
    want_scores, want_keys = search.top(scores, depth, exclude=exclude)
    got_scores, got_keys = search.best(query, depth, admitted, exclude, **options)
    assert np.allclose(got_scores, want_scores, rtol=1e-5, atol=1e-6), query
    if len(want_keys):
        last = want_scores[-1]
        sure = ~np.isclose(want_scores, last, rtol=1e-5)
        assert np.array_equal(got_keys[sure], want_keys[sure]), query
        assert np.allclose(search.scores_at(query, got_keys), got_scores, rtol=1e-5,
                           atol=1e-6)


def test_best_papers_of_the_seed_corpus_are_those_of_every_posting(
        seed_engine: SearchEngine) -> None:
    with seed_engine.snapshot() as view:
        assert isinstance(view, LocalView)
        search = view.lexical_search
        titles = [paper.title for paper in view.papers(view.keys()[:40]).values()]
        queries = titles + ["learning", "graph neural networks for molecules",
                            "the of and in", "xenobots"]
        for query in queries:
            for depth in (1, 10, 50):
                # long_term 0: the threshold is set and checked before every term.
                for long_term in (0, 4096):
                    _assert_same_best(search, query, depth, long_term=long_term)


@needs_dev_data
def test_best_papers_of_dev_segments_with_deletions_are_those_of_every_posting() -> None:
    records = dev_records(24_000)
    texts = [f"{r['title']}. {r.get('abstract') or ''}" for r in records]
    keys = np.arange(1, len(texts) + 1)
    cuts = [(0, 12_000), (12_000, 20_000), (20_000, 24_000)]
    segments = [Postings.build(keys[a:b], texts[a:b]) for a, b in cuts]
    gone = keys[::11]
    search = LexicalSearch([(index, np.isin(index.keys(), gone, invert=True))
                            for index in segments])
    rng = np.random.default_rng(3)
    queries = [str(r["title"]) for r in records[::997]] + [texts[5][:2000]]
    for query in queries:
        _assert_same_best(search, query, 50)
        allowed = keys[rng.random(len(keys)) < 0.3]
        _assert_same_best(search, query, 50, search.mask(allowed), keys[:500])
        # Deleted papers score nothing when asked for by key.
        assert not search.scores_at(query, gone[:50]).any()


def test_a_merge_of_interleaved_keys_keeps_each_terms_rows_ascending() -> None:
    texts = [f"alpha beta w{i % 17} w{i % 5} gamma{i % 3}" for i in range(400)]
    odd = Postings.build(np.arange(1, 400, 2), texts[:200])
    even = Postings.build(np.arange(2, 401, 2), texts[200:])
    first = Postings.merged([(odd, None), (even, None)])
    # Keys 1..399 odd and 2..400 even interleave: the merge renumbers every row.
    for merged in (first, Postings.merged([(first, np.arange(400) % 3 > 0)])):
        for kind in ("words", "pairs"):
            postings = merged.postings(kind)
            for term in range(len(postings.terms)):
                rows = postings.rows[postings.indptr[term]:postings.indptr[term + 1]]
                assert np.all(np.diff(rows) > 0)
    whole = LexicalSearch([(Postings.build(np.arange(1, 401),
                                           [texts[(k - 1) // 2 + (200 if k % 2 == 0 else 0)]
                                            for k in range(1, 401)]), None)])
    merged_search = LexicalSearch([(first, None)])
    for query in ("alpha w3", "w16 gamma2", "beta w4 w1"):
        assert np.allclose(merged_search.best(query, 20)[0], whole.best(query, 20)[0])


def test_postings_with_rows_out_of_order_are_searched_as_well() -> None:
    # Segments merged before merges kept rows ascending hold a term's rows in any order.
    texts = [f"delta w{i % 13} w{i % 7} epsilon{i % 4}" for i in range(600)]
    built = Postings.build(np.arange(1, 601), texts)
    rng = np.random.default_rng(0)

    def shuffled(postings: TermPostings) -> TermPostings:
        order = np.concatenate([rng.permutation(np.arange(low, high)) for low, high in
                                zip(postings.indptr[:-1], postings.indptr[1:])])
        return dataclasses.replace(postings, rows=postings.rows[order],
                                   tf=postings.tf[order])

    scrambled = Postings(shuffled(built.postings("words")), shuffled(built.postings("pairs")),
                         built.keys())
    old, new = LexicalSearch([(scrambled, None)]), LexicalSearch([(built, None)])
    for query in ("delta w3 w5", "epsilon2 w12", "w6"):
        _assert_same_best(old, query, 25, long_term=0)
        assert np.allclose(old.best(query, 25)[0], new.best(query, 25)[0])


def test_a_long_query_keeps_its_most_weighted_terms_within_the_budget(
        seed_engine: SearchEngine) -> None:
    with seed_engine.snapshot() as view:
        assert isinstance(view, LocalView)
        search = view.lexical_search
        words = ["learning", "model", "diffusion", "prompting"]
        # The rarest word (fewest papers) has the highest idf: the most weight.
        papers = {word: len(search.best(word, 10_000, pair_weight=0)[1]) for word in words}
        assert 0 not in papers.values() and len(set(papers.values())) == len(words)
        rarest = min(words, key=papers.__getitem__)
        query = " ".join(words)
        # A budget of no postings keeps the one term of most weight.
        assert np.array_equal(search.best(query, 10, pair_weight=0, budget=0)[1],
                              search.best(rarest, 10, pair_weight=0)[1])
        # A query within the budget is scored in full.
        _assert_same_best(search, query, 10)
        assert not np.array_equal(search.best(query, 10)[1],
                                  search.best(query, 10, budget=0)[1])
