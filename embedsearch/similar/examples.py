"""Example papers that may lie outside the index: `SearchEngine.similar_to_papers`.

A reference list, a .bib file or a colleague's JSON lines name papers the index may or
may not hold. Each given paper is matched to the index by id, else by DOI, else by
arXiv id (both normalised, see `identifiers`), else by its normalised title (case
folded, punctuation and spaces collapsed, so "Attention Is All You Need." and
"attention is all you need" are one paper); a matched paper uses its stored vector
(no encoding, and it is never returned), and the others are encoded together in one
batch, as the index embedded its own papers. A bibliography entry without an abstract
(`Paper.title_only`) the index does not hold is encoded from its title and weighs
`TITLE_ONLY_WEIGHT` in the mean, as a title says less of a paper than its abstract.
Every hit names the given papers nearest to it (`Hit.because`), so a reader can tell
which of their papers brought it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..papers import Paper, embedding_text, normalise_title
from ..search.retrieval import Reasons, Request
from ..storage import View
from .recommending import (
    CLUSTER_THRESHOLD,
    Library,
    clusters_of,
    example_vector,
    library_groups,
    ranker,
    unit,
)

__all__ = ["TITLE_ONLY_WEIGHT", "Examples", "example_text", "like_keys", "like_papers",
           "match_keys", "pull_towards", "query_requests", "resolve_examples"]

#: The weight of an example encoded from its title alone, against 1 for one with an
#: abstract or stored in the index. scripts/title_only_study.py hid one paper of a dev
#: keyword topic among 5,000 and gave 12 others as a bibliography, 2 with abstracts:
#: tuned on even topics (title + keywords: recall@20 0.218 / 0.256 / 0.244 at weights
#: 0.25 / 0.5 / 1), on the 157 odd ones 0.5 found the paper in the top 20 for 0.369 of
#: topics (median rank 55) against 0.287 (rank 106) with the title-only entries left
#: out, as before. A title says less than an abstract: half a vote, not none.
TITLE_ONLY_WEIGHT = 0.5
_log = logging.getLogger("embedsearch")


def pull_towards(query: NDArray[np.float32],
                 examples: NDArray[np.float32]) -> NDArray[np.float32]:
    """A query vector pulled towards example papers (`search`'s `positives`): the query
    plus the mean of the examples' vectors, of unit length; the query itself if none."""
    if not len(examples):
        return query
    return unit(query + examples.mean(0))


def query_requests(view: View, texts: Sequence[str], vectors: NDArray[np.float32],
                   positives: NDArray[np.int64]) -> list[Request]:
    """The request of each query (row i of `vectors` is text i's), pulled towards the
    index's papers `positives` (`search`'s), which are never returned."""
    pulled = view.vectors(positives)
    return [Request(text, pull_towards(vector, pulled), positives, text)
            for text, vector in zip(texts, vectors)]


def example_text(papers: Sequence[Paper]) -> str:
    """What the example papers say, for evidence: their titles and abstracts."""
    return " ".join(f"{paper.title} {paper.abstract}" for paper in papers)


@dataclass(frozen=True)
class Examples:
    """Given papers as vectors: one row per paper, each row's weight in their mean, and
    the index keys of those matched."""

    vectors: NDArray[np.float32]
    weights: NDArray[np.float32]
    matched: NDArray[np.int64]


def match_keys(papers: Sequence[Paper], view: View) -> list[int | None]:
    """The index key of each paper (by id, else DOI, else arXiv id, else normalised
    title), or None."""
    by_id = view.keys_of(paper.id for paper in papers)
    found: list[int | None] = [by_id.get(paper.id) for paper in papers]
    for kind in ("doi", "arxiv_id"):
        values = [getattr(paper, kind) for paper, key in zip(papers, found) if key is None]
        if any(values):
            known = view.keys_by_identifier(kind, (value for value in values if value))
            found = [key if key is not None else known.get(getattr(paper, kind))
                     for paper, key in zip(papers, found)]
    missing = [normalise_title(paper.title) for paper, key in zip(papers, found)
               if key is None]
    if missing:
        titles = view.keys_by_title(title for title in missing if title)
        found = [key if key is not None else titles.get(normalise_title(paper.title))
                 for paper, key in zip(papers, found)]
    return found


def resolve_examples(papers: Sequence[Paper], view: View,
                     encode: Callable[[list[str]], NDArray[np.float32]],
                     fields: Sequence[str]) -> Examples:
    """The vectors of `papers`: stored ones for papers the index holds, the rest encoded
    in one call of `encode` on their embedded text (`fields`, the index's own)."""
    keys = match_keys(papers, view)
    out = np.zeros((len(papers), view.manifest.model.dim), dtype=np.float32)
    known = [i for i, key in enumerate(keys) if key is not None]
    if known:
        out[known] = view.vectors(np.array([keys[i] for i in known], dtype=np.int64))
    new = [i for i, key in enumerate(keys) if key is None]
    if new:
        out[new] = encode([embedding_text(papers[i], fields) for i in new])
    weights = np.ones(len(papers), dtype=np.float32)
    titles_only = [i for i in new if papers[i].title_only]
    weights[titles_only] = TITLE_ONLY_WEIGHT
    matched = np.array(sorted({key for key in keys if key is not None}), dtype=np.int64)
    _log.info("Examples: %d given, %d found in the index, %d encoded from abstracts, %d from "
              "titles alone.", len(papers), len(known), len(new) - len(titles_only),
              len(titles_only))
    return Examples(out, weights, matched)


def like_keys(view: View, keys: NDArray[np.int64], against: NDArray[np.int64],
              method: str = "mean") -> Request:
    """The dense request for papers like the index's `keys` and unlike `against`, ranked
    by their stored vectors by `method` (see `recommending`); none of them is returned."""
    positives, negatives = view.vectors(keys), view.vectors(against)
    vector = example_vector(positives, negatives)
    found = view.papers(int(key) for key in keys)
    given = [found[int(key)] for key in keys]
    labels = clusters_of(positives, CLUSTER_THRESHOLD)
    library = Library(positives, np.ones(len(positives), dtype=np.float32), negatives,
                      labels)
    return Request(None, vector, np.union1d(keys, against), example_text(given),
                   ranker(method, library), _reasons(library, given))


def _reasons(library: Library, papers: Sequence[Paper]) -> Reasons:
    """Each given paper by id and title, and the label of its cluster in the library
    (whose clusters `library` holds)."""
    labels = np.zeros(len(papers), np.int64) if library.clusters is None else library.clusters
    # Titles and keywords name a group as well as abstracts do, at a fifth of the cost,
    # and they are all a bibliography entry without an abstract has.
    names = library_groups(labels, [" ".join([paper.title, *paper.keywords])
                                    for paper in papers])
    return Reasons(library.vectors, tuple(paper.id for paper in papers),
                   tuple(paper.title for paper in papers),
                   tuple(names[int(label)] for label in labels))


def like_papers(given: Sequence[Paper], against: Sequence[Paper], view: View,
                encode: Callable[[list[str]], NDArray[np.float32]],
                method: str = "mean") -> Request:
    """The dense request for papers like `given` and unlike `against`, which need not be
    in the index (`resolve_examples`), ranked by `method` (see `recommending`); those
    the index holds are never returned."""
    found = resolve_examples([*given, *against], view, encode, view.manifest.text.fields)
    split = len(given)
    vector = example_vector(found.vectors[:split], found.vectors[split:],
                            positive_weights=found.weights[:split],
                            negative_weights=found.weights[split:])
    library = Library(found.vectors[:split], found.weights[:split], found.vectors[split:],
                      clusters_of(found.vectors[:split], CLUSTER_THRESHOLD))
    return Request(None, vector, found.matched, example_text(given),
                   ranker(method, library), _reasons(library, given))
