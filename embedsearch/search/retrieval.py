"""Answering one query against one generation: dense, lexical or hybrid ranking, optional
diversity, component scores and evidence for the hits.

A query is a text, a vector, or both (a text plus example papers, or example papers
alone); `exclude` holds keys never to return (the examples themselves).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, get_args

import numpy as np
from numpy.typing import NDArray

from ..errors import QueryError
from ..filters import Filters
from ..storage import PassageRanked, Ranked, View
from .evidence import find_evidence
from .fusion import FUSION_DEPTH, cosine_scale, fuse, mmr
from .passages import PassageEvidence, best_of
from .results import Hit, Reason

#: A dense ranking made otherwise than by one search: (view, depth, filters, exclude).
Ranker = Callable[[View, int, "Filters | None", NDArray[np.int64]], Ranked]

__all__ = [
    "MAX_K",
    "MAX_QUERY_CHARS",
    "MODES",
    "Mode",
    "Ranker",
    "Reasons",
    "Request",
    "Retriever",
    "check_k",
    "check_mode",
    "check_query",
]

#: Search modes: hybrid (BM25 and dense, fused; the default), dense, lexical. The type
#: is the HTTP API's too (`server.schemas`), so both take the same modes.
Mode = Literal["hybrid", "dense", "lexical"]
MODES: tuple[str, ...] = get_args(Mode)
#: Candidates `--diverse` re-ranks, per hit asked for.
DIVERSE_POOL = 3
#: Longest query text accepted, in every face (CLI, HTTP API, page, MCP): room for a
#: pasted title and abstract, the main way to ask "what is like this paper?". The
#: longest title + abstract of the 79,509 dev papers is 16,297 characters (the 99th
#: percentile 1,893). The encoder reads a query's first 256 tokens (about 1,000
#: characters of English); BM25 and evidence read all of it.
MAX_QUERY_CHARS = 20_000
MAX_K = 10_000
#: How often a query is answered anew when a storage written in place (Milvus) lost one
#: of its papers to another process between two lookups of one answer: papers then
#: vectors (the rank before that is already tolerant). Each try is a fresh search, so a
#: second one nearly always finds a stable set; a third failure is raised.
_ATTEMPTS = 3

# The checks' messages say what is wrong but not with which argument: that is
# `parameter`, which the CLI words as its flag and the server as its request field.


def check_k(k: int) -> None:
    """Refuse a k that is not an integer from 1 to MAX_K."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise QueryError(f"must be an integer from 1 to {MAX_K}, got {k!r}", parameter="k")


def check_query(query: str) -> str:
    """The query text, stripped; refuses an empty or overlong one."""
    if not isinstance(query, str) or not query.strip():
        raise QueryError("the query is empty; type what you are looking for",
                         parameter="query")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is {len(query):,} characters long; the limit is "
                         f"{MAX_QUERY_CHARS:,}: shorten it", parameter="query")
    return query.strip()


def check_mode(mode: str) -> str:
    """The mode, if it is one of `MODES`."""
    if mode not in MODES:
        raise QueryError(f"must be one of {', '.join(MODES)}, got '{mode}'",
                         parameter="mode")
    return mode


@dataclass(frozen=True)
class Reasons:
    """The example papers of a recommendation request, to name each hit's nearest:
    their vectors (rows), ids and titles, and the library group each is in."""

    vectors: NDArray[np.float32]
    ids: tuple[str, ...]
    titles: tuple[str, ...]
    groups: tuple[str, ...] = ()

    def explain(self, vectors: NDArray[np.float32], count: int = 3
                ) -> list[tuple[tuple[Reason, ...], str | None]]:
        """For each row of `vectors`, the `count` examples of highest cosine to it, and
        the group of the nearest."""
        if not len(self.ids) or not len(vectors):
            return [((), None) for _ in range(len(vectors))]
        similarity = vectors @ self.vectors.T
        order = np.argsort(-similarity, axis=1, kind="stable")[:, :count]
        return [(tuple(Reason(self.ids[j], self.titles[j], float(similarity[i, j]))
                       for j in row), self.groups[row[0]] if self.groups else None)
                for i, row in enumerate(order)]


@dataclass(frozen=True)
class Request:
    """One query: its text (for lexical ranking and evidence), its vector, what to skip."""

    text: str | None
    vector: NDArray[np.float32] | None
    exclude: NDArray[np.int64]
    evidence_text: str
    #: A dense ranking of its own (a library's clusters, see `recommending`), in place of
    #: one search for `vector`, which then serves for the hits' dense scores.
    ranker: Ranker | None = None
    #: The example papers, when the hits are recommendations: each hit names its nearest.
    reasons: Reasons | None = None


def _scaled(scores: NDArray[np.float32]) -> NDArray[np.float32]:
    """BM25 scores scaled to [0, 1]: relevance for diversity when there is no vector."""
    low, high = float(scores.min()), float(scores.max())
    scaled = (scores - low) / (high - low) if high > low else np.ones(len(scores))
    return np.asarray(scaled, dtype=np.float32)


def _similarities(dense: NDArray[np.float32] | None,
                  because: list[tuple[tuple[Reason, ...], str | None]] | None,
                  count: int) -> list[float | None]:
    """Each hit's cosine (see `Hit.similarity`): to its nearest library paper for a
    recommendation, else to the request's vector; None without a vector."""
    if because:
        return [reasons[0].similarity if reasons else None for reasons, _ in because]
    if dense is not None:
        return [float(value) for value in dense]
    return [None] * count


class Retriever:
    """Ranks the papers of one view of an index for requests; the same code for every
    storage, so fusion, diversity and evidence do not depend on where the data lives."""

    def __init__(self, view: View, encode: Callable[[list[str]], NDArray[np.float32]]) -> None:
        self._view, self._encode = view, encode

    def _rank(self, request: Request, k: int, mode: str, filters: Filters | None,
              diverse: bool) -> tuple[Ranked, Ranked | None, bool, PassageEvidence]:
        """The `k` papers chosen with their ranking's scores, best first; the lexical
        ranking the choice drew on, if any (its scores are the hits' BM25 scores, so
        they are not asked of the storage again: a round trip to Milvus); whether the
        scores were put on the cosine scale (`Hit.score`); and the best passages each
        side found, for papers read in full."""
        depth = max(FUSION_DEPTH, k * (DIVERSE_POOL if diverse else 1))
        view, exclude, vector = self._view, request.exclude, request.vector
        lexical: Ranked | None = None
        # Passages answer a text query; papers given as examples are matched by their
        # abstracts' vectors, as they always were.
        passages = view.has_passages and bool(request.text) and request.ranker is None
        words = found = None
        if mode == "lexical" or vector is None:
            if not request.text:
                raise QueryError("a lexical search needs query text", parameter="query")
            ranked, words = self._lexical(request.text, depth, filters, exclude, passages)
            lexical = ranked
        elif request.ranker is not None:
            ranked = request.ranker(view, depth, filters, exclude)
        elif mode == "dense" or not request.text:
            ranked, found = self._dense(vector, depth, filters, exclude, passages)
        else:
            lexical, words = self._lexical(request.text, depth, filters, exclude, passages)
            dense, found = self._dense(vector, depth, filters, exclude, passages)
            ranked = fuse(lexical, dense)
        evidence = PassageEvidence(found, words)
        rescale = vector is not None and request.ranker is None and lexical is not None
        if not len(ranked[1]):
            return ranked, lexical, rescale, evidence
        # BM25 or a fused z-score only compares the hits of one query: shown as a score,
        # it is put on the cosine scale of its candidates (`cosine_scale`). A dense
        # ranking's scores are cosines already; a recommendation's are its method's,
        # replaced in `_hits` by each hit's cosine to its nearest library paper.
        vectors = view.vectors(ranked[1]) if rescale or diverse else None
        if rescale and vectors is not None and vector is not None:
            cosines = evidence.best_cosines(ranked[1], vectors @ vector)
            ranked = cosine_scale(ranked[0], cosines), ranked[1]
        if diverse and vectors is not None:
            # MMR chooses which k papers, weighing the cosine to the query against the
            # closest pick (`MMR_LAMBDA` was tuned so); they are then shown by score.
            relevance = vectors @ vector if vector is not None else _scaled(ranked[0])
            chosen = mmr(relevance, vectors, k)
            chosen = chosen[np.argsort(-ranked[0][chosen], kind="stable")]
            ranked = ranked[0][chosen], ranked[1][chosen]
        return (ranked[0][:k], ranked[1][:k]), lexical, rescale, evidence

    def _lexical(self, text: str, depth: int, filters: Filters | None,
                 exclude: NDArray[np.int64], passages: bool
                 ) -> tuple[Ranked, PassageRanked | None]:
        """BM25's ranking, each paper by the best of its abstract and (`passages`) its
        passages, and the best passages found."""
        ranked = self._view.lexical(text, depth, filters, exclude)
        if not passages:
            return ranked, None
        best = self._view.passage_lexical(text, depth, filters, exclude)
        return best_of(ranked, best, depth), best

    def _dense(self, vector: NDArray[np.float32], depth: int, filters: Filters | None,
               exclude: NDArray[np.int64], passages: bool
               ) -> tuple[Ranked, PassageRanked | None]:
        """The dense ranking, each paper by the best of its abstract and passages."""
        ranked = self._view.dense(vector, depth, filters, exclude)
        if not passages:
            return ranked, None
        best = self._view.passage_dense(vector, depth, filters, exclude)
        return best_of(ranked, best, depth), best

    def _lexical_scores(self, text: str, keys: NDArray[np.int64],
                        lexical: Ranked | None) -> NDArray[np.float32]:
        """The BM25 score of each of `keys`: from `lexical` where it ranked them, else
        asked of the storage (a hybrid hit found by dense search alone)."""
        known = (dict(zip(lexical[1].tolist(), lexical[0].tolist())) if lexical is not None
                 else {})
        missing = np.array([key for key in keys.tolist() if key not in known], np.int64)
        if len(missing):
            known.update(zip(missing.tolist(),
                             self._view.lexical_scores(text, missing).tolist()))
        return np.array([known[key] for key in keys.tolist()], dtype=np.float32)

    def hits(self, request: Request, k: int, mode: str, filters: Filters | None,
             diverse: bool = False, evidence: bool = True,
             min_score: float | None = None) -> list[Hit]:
        """The request's top `k` hits, those of `score` under `min_score` left out (the
        others keep their order and are numbered again from 1)."""
        for attempt in range(_ATTEMPTS):
            try:
                found = self._hits(request, k, mode, filters, diverse, evidence)
                break
            except KeyError:  # a paper ranked was removed by another process meanwhile
                if attempt == _ATTEMPTS - 1:
                    raise
        if min_score is None:
            return found
        kept = [hit for hit in found if hit.score >= min_score]
        return [replace(hit, rank=rank) for rank, hit in enumerate(kept, 1)]

    def _hits(self, request: Request, k: int, mode: str, filters: Filters | None,
              diverse: bool, evidence: bool) -> list[Hit]:
        (scores, keys), lexical_ranking, rescaled, passages = self._rank(
            request, k, mode, filters, diverse)
        view = self._view
        papers = view.papers(int(key) for key in keys)
        # A storage written in place (Milvus) may lose a paper to another process between
        # the ranking and this lookup: it is left out rather than failing the query.
        present = np.array([int(key) in papers for key in keys], dtype=bool)
        scores, keys = scores[present], keys[present]
        vectors = (view.vectors(keys) if len(keys) and (request.vector is not None
                                                        or request.reasons is not None)
                   else None)
        dense = vectors @ request.vector if vectors is not None and request.vector is not None \
            else None
        because = (request.reasons.explain(vectors) if request.reasons is not None
                   and vectors is not None else None)
        lexical = (self._lexical_scores(request.text, keys, lexical_ranking)
                   if request.text and mode != "dense" and len(keys) else None)
        won, dense, lexical = passages.winners(keys, dense, lexical)
        shown_passages = view.passages(key for key in won if key is not None)
        passage = [shown_passages.get(key) if key is not None else None for key in won]
        texts = [p.text if p is not None else papers[int(key)].abstract
                 for p, key in zip(passage, keys)]
        found = (find_evidence(texts, request.evidence_text, view.words, request.vector,
                               self._encode, shared=request.text is None)
                 if evidence else None)
        similarity = _similarities(dense, because, len(keys))
        # A dense search and a recommendation show a cosine (see `_rank`); a list whose
        # method's order is not that score (clusters in turns) is shown best first by it.
        shown = [float(score) if rescaled or value is None else value
                 for value, score in zip(similarity, scores)]
        order = sorted(range(len(keys)), key=lambda i: -shown[i])
        return [
            Hit(rank, shown[i], papers[int(keys[i])], similarity=similarity[i],
                lexical_score=float(lexical[i]) if lexical is not None else None,
                evidence=found[i].sentence if found else None,
                evidence_terms=found[i].terms if found else (),
                because=because[i][0] if because else (),
                group=because[i][1] if because else None, passage=passage[i])
            for rank, i in enumerate(order, 1)
        ]
