"""Ranking candidates by a library of example papers: the ways of `similar --from`.

A library (a bibliography, a reading list, a Zotero collection) is several topics at
once. Each method here orders candidate papers by how much they are like the library,
from the examples' vectors and weights (a title-only example weighs less, see
`examples.TITLE_ONLY_WEIGHT`) and the candidates' stored vectors:

- `mean`: the cosine to the weighted mean of the examples (Rocchio, the original way):
  one direction, which for a mixed library points between its topics and mostly at the
  largest one;
- `clusters`: the examples clustered (average-linkage on cosine distance, as many
  clusters as the data gives under a distance threshold), one mean per cluster, and
  the clusters' rankings interleaved in proportion to their weight, each with a floor
  share so that a small topic is not drowned;
- `classifier`: a logistic regression of the examples against a sample of the index
  (arxiv-sanity's per-tag SVM, in spirit), scoring candidates by its linear score;
- `nearest`: each candidate scored by its similarity to its few nearest examples.

Every method takes negative examples ("not like these") too. `scripts/
recommendation_study.py` measures them on the dev corpus; its table is in the docs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import QueryError
from ..filters import Filters
from ..search.retrieval import Ranker
from ..storage import Ranked, View
from ..text.words import label_words

__all__ = ["CLUSTER_FLOOR", "CLUSTER_MIN_SIZE", "CLUSTER_POWER", "CLUSTER_THRESHOLD",
           "DEFAULT_METHOD", "METHODS", "NEGATIVE_WEIGHT", "Library", "classifier_direction",
           "cluster_directions", "clusters_of", "example_vector", "interleave",
           "library_groups", "nearest_scores", "order_by", "ranker", "unit"]

Vectors = NDArray[np.float32]
#: How much the negative examples of `similar` pull away (Rocchio's gamma over beta).
NEGATIVE_WEIGHT = 0.5
#: The clusters' rules, tuned by scripts/recommendation_study.py on even topics (see
#: docs/explanation/recommendations.md; thresholds 0.55/0.6/0.65, shares by weight to
#: the power 1/0.5/0): clusters stop merging at this cosine distance (average
#: linkage), 0.55 finding minority topics in the top 20 most often (0.099 against
#: 0.082-0.094)...
CLUSTER_THRESHOLD = 0.55
#: ...each cluster's slots in proportion to its weight (power 1: giving small clusters
#: more, 0.5 or 0, found no more minority papers and fewer of the majority)...
CLUSTER_POWER = 1.0
#: ...and never less than this share (0.2 and 0.3 found exactly what 0.1 did on the
#: even topics: a small topic's slots are not what keeps its papers out of the top 20,
#: its cluster's direction is)...
CLUSTER_FLOOR = 0.1
#: ...when it holds at least this many examples: a lone example is a stray, not a topic
#: (with 2, the majority topic was found in the top 20 for 0.273 of even libraries
#: against 0.250 with every cluster floored, minority topics as often, 0.099).
#: Tried since (issue 40, even topics, 8 libraries per topic count and size; single,
#: majority, minority in the top 20 against 0.312, 0.273, 0.099 for these rules), none
#: kept: directions moved away from the index's mean by half of it (0.344, 0.273,
#: 0.102 on even, but 0.406, 0.266, 0.142 against 0.406, 0.250, 0.148 on odd), by all
#: of it (0.312, 0.250, 0.105); a cluster contrasted with the library's other clusters
#: (minorities 0.111-0.119, single topics 0.156-0.250: one topic splits into clusters
#: too); pseudo-relevance feedback from the index's top 5 (0.097); one direction per
#: true topic, as if the clustering were perfect (0.077: a topic is better heard through
#: several clusters); slots shared between coarser groups (0.7, 0.8 apart) first, then
#: their clusters, plain or fused by reciprocal rank (0.091-0.105, single 0.219-0.281);
#: a threshold of 0.5 (0.105, single 0.219). What holds minorities back: a minority topic
#: spans a median of 6 clusters, and its held-back paper is in the top 5 of one of them
#: for 0.287 of topics, but most are one or two title-only entries with no slot, and no
#: rule above tells which of them to give one.
CLUSTER_MIN_SIZE = 2
#: The most examples clustered by linkage; a larger library is clustered by a sample.
MAX_CLUSTERED = 2000
#: `nearest`: how many of a candidate's nearest examples it is scored by.
NEIGHBOURS = 5
#: `nearest` over an index searches around each example, or around each cluster's
#: direction when there are more examples than this (a search costs one dense query).
MAX_PROBES = 64
#: `classifier`: how many of the index's papers it learns to tell the examples from.
BACKGROUND = 1000
#: The default way of `similar --from`, `similar_to_papers` and POST /similar.
DEFAULT_METHOD = "clusters"


@dataclass(frozen=True)
class Library:
    """Example papers as vectors: `vectors` (unit rows) with their `weights`, and the
    negative examples' vectors (may be empty)."""

    vectors: Vectors
    weights: NDArray[np.float32]
    negatives: Vectors
    #: Each example's cluster, when already made (`clusters_of` at the rule's threshold).
    clusters: NDArray[np.int64] | None = None


def unit(vector: Vectors) -> Vectors:
    """`vector` scaled to unit length (a zero vector stays zero), contiguous float32."""
    return np.ascontiguousarray(vector / max(float(np.linalg.norm(vector)), 1e-12),
                                dtype=np.float32)


def _mean(vectors: Vectors, weights: NDArray[np.float32] | None) -> Vectors:
    if weights is None:
        return np.asarray(vectors.mean(0), dtype=np.float32)
    return np.asarray((vectors * weights[:, None]).sum(0) / weights.sum(), dtype=np.float32)


def example_vector(positives: Vectors, negatives: Vectors, *,
                   positive_weights: NDArray[np.float32] | None = None,
                   negative_weights: NDArray[np.float32] | None = None) -> Vectors:
    """The direction of "like these, unlike those", of unit length: the (weighted) mean of
    the positive vectors minus NEGATIVE_WEIGHT times that of the negative ones (none:
    nothing taken). The `mean` way, and each cluster's direction in the `clusters` one."""
    vector = _mean(positives, positive_weights)
    if len(negatives):
        vector = vector - NEGATIVE_WEIGHT * _mean(negatives, negative_weights)
    return unit(vector)


def mean_order(library: Library, candidates: Vectors) -> NDArray[np.int64]:
    """Candidates by cosine to the library's weighted mean (minus its negatives')."""
    scores = candidates @ example_vector(library.vectors, library.negatives,
                                         positive_weights=library.weights)
    return np.argsort(-scores, kind="stable")


def clusters_of(vectors: Vectors, threshold: float) -> NDArray[np.int64]:
    """A cluster label for each example: average linkage on cosine distance, merging
    until clusters are `threshold` apart (one cluster for fewer than 3 examples).

    Linkage costs the square of the examples in time and memory: beyond
    `MAX_CLUSTERED` examples, a fixed sample of them is clustered and every example
    joins the cluster whose mean it is closest to."""
    if len(vectors) < 3:
        return np.zeros(len(vectors), dtype=np.int64)
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(n_clusters=None, metric="cosine", linkage="average",
                                    distance_threshold=threshold)
    if len(vectors) <= MAX_CLUSTERED:
        return np.asarray(model.fit_predict(vectors), dtype=np.int64)
    sample = np.sort(np.random.default_rng(0).choice(len(vectors), MAX_CLUSTERED,
                                                     replace=False))
    labels = np.asarray(model.fit_predict(vectors[sample]), dtype=np.int64)
    means = np.array([unit(vectors[sample][labels == label].mean(0))
                      for label in range(int(labels.max()) + 1)])
    return np.asarray(np.argmax(vectors @ means.T, axis=1), dtype=np.int64)


def library_groups(labels: NDArray[np.int64], texts: Sequence[str]) -> list[str]:
    """A short label for each of the library's clusters (`labels`, one per example, as
    `clusters_of` makes them): its most characteristic words among the library's texts
    (as the map labels its regions, `words.label_words`), else its first paper's text."""
    count = int(labels.max()) + 1 if len(labels) else 0
    if count == 1:  # no word is more of the one cluster than of the library: its paper
        return [texts[0][:60]]
    names = []
    for cluster, words in enumerate(label_words(texts, labels, count) if count else []):
        first = texts[int(np.flatnonzero(labels == cluster)[0])]
        names.append(" · ".join(words) if words else first[:60])
    return names


def interleave(orders: list[NDArray[np.int64]], shares: NDArray[np.float64],
               count: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The first `count` distinct candidates taken from `orders` in turns, each order
    given slots in proportion to its share (largest remainder at every step), and the
    order each was taken from."""
    taken = np.zeros(len(orders))
    cursor = [0] * len(orders)
    seen: set[int] = set()
    out: list[int] = []
    sources: list[int] = []
    while len(out) < count:
        step = len(out) + 1
        behind = shares * step - taken
        for at in np.argsort(-behind, kind="stable"):
            order = orders[at]
            while cursor[at] < len(order) and int(order[cursor[at]]) in seen:
                cursor[at] += 1
            if cursor[at] < len(order):
                break
        else:
            break
        candidate = int(orders[at][cursor[at]])
        seen.add(candidate)
        out.append(candidate)
        sources.append(int(at))
        taken[at] += 1
    return np.array(out, dtype=np.int64), np.array(sources, dtype=np.int64)


def cluster_directions(library: Library, *, threshold: float = CLUSTER_THRESHOLD,
                       floor: float = CLUSTER_FLOOR, power: float = CLUSTER_POWER,
                       min_size: int = CLUSTER_MIN_SIZE
                       ) -> tuple[Vectors, NDArray[np.float64]]:
    """One unit direction per cluster of the library (its weighted mean, less the
    negatives'), and each cluster's share of the slots: its weight raised to `power`
    (1: in proportion to its size; 0.5 gives small clusters more), at least `floor`
    for a cluster of `min_size` examples or more (a topic, not a stray)."""
    labels = (library.clusters if library.clusters is not None
              and threshold == CLUSTER_THRESHOLD else clusters_of(library.vectors, threshold))
    directions, weights, sizes = [], [], []
    for label in np.unique(labels):
        inside = labels == label
        directions.append(example_vector(library.vectors[inside], library.negatives,
                                         positive_weights=library.weights[inside]))
        weights.append(float(library.weights[inside].sum()))
        sizes.append(int(inside.sum()))
    shares = np.asarray(weights) ** power
    shares = shares / shares.sum()
    floored = np.asarray(sizes) >= min(min_size, max(sizes))
    shares[floored] = np.maximum(shares[floored], min(floor, 1 / len(shares)))
    return np.array(directions, dtype=np.float32), shares / shares.sum()


def clusters_order(library: Library, candidates: Vectors, *,
                   threshold: float = CLUSTER_THRESHOLD, floor: float = CLUSTER_FLOOR,
                   power: float = CLUSTER_POWER, min_size: int = CLUSTER_MIN_SIZE
                   ) -> NDArray[np.int64]:
    """Candidates from each cluster's direction in turns, by the clusters' shares."""
    directions, shares = cluster_directions(library, threshold=threshold, floor=floor,
                                            power=power, min_size=min_size)
    orders = [np.argsort(-(candidates @ d), kind="stable") for d in directions]
    return interleave(orders, shares, len(candidates))[0]


def classifier_direction(library: Library, background: Vectors, *,
                         strength: float = 3.0) -> Vectors:
    """The unit direction of a logistic regression of the examples (and against the
    negative examples) versus `background`, a sample of the index: ranking by it is
    ranking by the classifier's linear score."""
    from sklearn.linear_model import LogisticRegression

    inputs = np.vstack([library.vectors, library.negatives, background])
    labels = np.r_[np.ones(len(library.vectors)), np.zeros(len(library.negatives)
                                                            + len(background))]
    weights = np.r_[library.weights, np.full(len(library.negatives), 2.0),
                    np.ones(len(background))]
    model = LogisticRegression(C=strength, class_weight="balanced", max_iter=200)
    model.fit(inputs, labels, sample_weight=weights)
    return unit(np.asarray(model.coef_[0], dtype=np.float32))


def classifier_order(library: Library, candidates: Vectors, background: Vectors, *,
                     strength: float = 3.0) -> NDArray[np.int64]:
    """Candidates by the classifier's score (`classifier_direction`)."""
    direction = classifier_direction(library, background, strength=strength)
    return np.argsort(-(candidates @ direction), kind="stable")


def nearest_scores(library: Library, candidates: Vectors, *,
                   neighbours: int = NEIGHBOURS) -> NDArray[np.float32]:
    """Each candidate's weighted mean similarity to its `neighbours` nearest examples,
    less half the similarity to its nearest negative example."""
    similarity = (candidates @ library.vectors.T) * library.weights[None, :]
    m = min(neighbours, similarity.shape[1])
    scores = np.partition(similarity, similarity.shape[1] - m, axis=1)[:, -m:].mean(1)
    if len(library.negatives):
        scores = scores - NEGATIVE_WEIGHT * (candidates @ library.negatives.T).max(1)
    return np.asarray(scores, dtype=np.float32)


def nearest_order(library: Library, candidates: Vectors, *,
                  neighbours: int = NEIGHBOURS) -> NDArray[np.int64]:
    """Candidates by `nearest_scores`."""
    scores = nearest_scores(library, candidates, neighbours=neighbours)
    return np.argsort(-scores, kind="stable")


# -- over an index: each method as the dense ranking of a request -----------------------


def _background(view: View, count: int = BACKGROUND) -> Vectors:
    """A fixed sample of the index's vectors: the classifier's negatives."""
    keys = view.keys()
    chosen = np.random.default_rng(0).choice(len(keys), size=min(count, len(keys)),
                                             replace=False)
    return view.vectors(np.sort(keys[chosen]))


def _clusters_ranker(library: Library) -> Ranker:
    directions, shares = cluster_directions(library)

    def rank(view: View, depth: int, filters: Filters | None,
             exclude: NDArray[np.int64]) -> Ranked:
        # A cluster whose share of `depth` slots is under one half gets none: it is not
        # searched (a library of 1,000 title-only papers has hundreds of lone ones).
        heard = shares * depth >= 0.5
        if not heard.any():
            heard = shares == shares.max()
        lists = [view.dense(direction, depth, filters, exclude)
                 for direction in directions[heard]]
        keys, sources = interleave([found for _, found in lists],
                                   shares[heard] / shares[heard].sum(), depth)
        score = [dict(zip(found.tolist(), scores.tolist())) for scores, found in lists]
        return (np.array([score[s][int(k)] for k, s in zip(keys, sources)], np.float32),
                keys)

    return rank


def _classifier_ranker(library: Library) -> Ranker:
    def rank(view: View, depth: int, filters: Filters | None,
             exclude: NDArray[np.int64]) -> Ranked:
        direction = classifier_direction(library, _background(view))
        return view.dense(direction, depth, filters, exclude)

    return rank


def _nearest_ranker(library: Library) -> Ranker:
    probes = library.vectors if len(library.vectors) <= MAX_PROBES else \
        cluster_directions(library)[0]

    def rank(view: View, depth: int, filters: Filters | None,
             exclude: NDArray[np.int64]) -> Ranked:
        found = [view.dense(probe, depth, filters, exclude)[1] for probe in probes]
        keys = np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)
        if not len(keys):
            return np.zeros(0, np.float32), keys
        scores = nearest_scores(library, view.vectors(keys))
        order = np.argsort(-scores, kind="stable")[:depth]
        return scores[order], keys[order]

    return rank


def ranker(method: str, library: Library) -> Ranker | None:
    """How `method` ranks an index for `library`, as a request's dense ranking; None for
    `mean`, which is one dense search for the mean direction."""
    if method not in METHODS:
        raise QueryError(f"unknown method {method!r}; choose one of "
                         f"{', '.join(METHODS)}", parameter="method")
    makers = {"clusters": _clusters_ranker, "classifier": _classifier_ranker,
              "nearest": _nearest_ranker}
    return makers[method](library) if method in makers else None


#: Each method by name: (library, candidates, background sample of the index) -> order.
METHODS: dict[str, Callable[[Library, Vectors, Vectors], NDArray[np.int64]]] = {
    "mean": lambda lib, cand, bg: mean_order(lib, cand),
    "clusters": lambda lib, cand, bg: clusters_order(lib, cand),
    "classifier": lambda lib, cand, bg: classifier_order(lib, cand, bg),
    "nearest": lambda lib, cand, bg: nearest_order(lib, cand),
}


def order_by(method: str, library: Library, candidates: Vectors,
             background: Vectors) -> NDArray[np.int64]:
    """The candidates' row numbers, most like the library first, by `method`."""
    return METHODS[method](library, candidates, background)
