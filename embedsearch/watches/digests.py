"""Digests: for each saved search (`watching.Watch`), the papers the index received in a
window of time that match it, ranked, each with its evidence sentence.

"Received" is what the index recorded at each write (`dates`, `Filters.added_after`),
not a paper's year: a digest over the week's `add` lists what arrived this week,
whatever its year. A digest lists what is worth reading, not always `k` papers: a hit
is kept when its score (`Hit.score`, the number it is shown and ordered by) is at least
the watch's floor (`min_similarity`, or the default for its kind): for a query, hybrid's
ranking on the cosine scale, so the words a paper shares with the query count as well as
its meaning; for a library, the cosine of the paper and its nearest library paper (see
`similarity_floor` for how the defaults were chosen).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..filters import Filters
from ..papers import Paper
from ..search.results import Hit
from ..text.dates import now
from .saved import Watch

__all__ = ["LIBRARY_FLOOR", "QUERY_FLOOR", "Digest", "DigestSection", "Searcher", "digest",
           "similarity_floor"]


class Searcher(Protocol):
    """What a digest asks of an open index: `SearchEngine` is one. A protocol, so that
    saved searches sit below the engine that keeps them and never import it."""

    def search(self, query: str, k: int = 10, *, filters: Filters | None = None,
               min_score: float | None = None) -> Sequence[Hit]: ...

    def similar_to_papers(self, papers: Iterable[Paper], k: int = 10, *,
                          filters: Filters | None = None,
                          min_score: float | None = None) -> Sequence[Hit]: ...

    def added(self, paper_ids: Iterable[str]) -> dict[str, str]: ...

    def count(self, filters: Filters | None = None) -> int: ...

#: The least score (hybrid's ranking on the cosine scale, `Hit.score`) for a query's
#: digest. Chosen by scripts/digest_threshold_study.py on the even keyword queries of
#: the dev corpus, in weeks of 1,000 papers, running the digest's own hybrid search: the
#: floor of best F2 against each keyword's tagged papers (recall counted twice, as a
#: digest is skimmed: 0.050 at 0.55, 0.049 at 0.525, 0.048 at 0.575, 0.045 at 0.475),
#: listing 1.5 papers a week per watch with recall 0.101 (false share 0.984). The floor
#: before issue 40, on the cosine alone (0.475), had recall 0.086 (false share 0.987) and
#: F2 0.040 on the same digests, listing 1.7: the words a paper shares with the query are
#: worth counting. docs/how-to/digest.md has both on the odd keywords.
QUERY_FLOOR = 0.55
#: The least cosine of a paper and its nearest library paper for a library's digest,
#: chosen by the same study (half of a keyword's papers as the library, 90% of them
#: title-only; the other half to be found): best F2 0.031 at 0.625 and 0.65, 0.027 at
#: 0.60, 0.021 at 0.675; 1.5 papers a week per watch.
LIBRARY_FLOOR = 0.625


def similarity_floor(watch: Watch) -> float:
    """How alike a paper must be to appear in `watch`'s digest: its own `min_similarity`,
    else the default for its kind (`QUERY_FLOOR`, `LIBRARY_FLOOR`)."""
    if watch.min_similarity is not None:
        return watch.min_similarity
    return QUERY_FLOOR if watch.kind == "query" else LIBRARY_FLOOR


@dataclass(frozen=True)
class DigestSection:
    """One watch's part of a digest: the `hits` (best first, each at least `floor`
    alike), when the index received each (`added`, by paper id), and how many papers
    it received in the window that pass the watch's filters (`arrived`). The window
    starts after `since` (an instant; '' for the index's first paper)."""

    watch: Watch
    hits: list[Hit]
    added: dict[str, str]
    arrived: int
    floor: float
    since: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"watch": self.watch.name, "looks_for": self.watch.describe(),
                "since": self.since, "floor": self.floor, "arrived": self.arrived,
                "hits": [{**hit.to_dict(), "added": self.added.get(hit.paper.id, "")}
                         for hit in self.hits]}


@dataclass(frozen=True)
class Digest:
    """What the index received after `since` up to `until` (instants), per watch."""

    since: str
    until: str
    sections: list[DigestSection]

    def to_dict(self) -> dict[str, Any]:
        return {"since": self.since, "until": self.until,
                "watches": [section.to_dict() for section in self.sections]}


def digest(engine: Searcher, watches: Sequence[Watch], *, since: str | None = None,
           until: str | None = None) -> Digest:
    """The digest of `watches` over the papers `engine`'s index received after `since`
    (an instant; None: each watch from its own `last_digest`, else from when it was
    made).

    `until` (default: now) is recorded, not applied: a paper written while the digest
    runs belongs to the next one once `until` is marked read (`WatchList.mark_read`).
    """
    until = until or now()
    sections = [_section(engine, watch, since if since is not None
                         else watch.last_digest or watch.created) for watch in watches]
    return Digest(since or "", until, sections)


def _section(engine: Searcher, watch: Watch, since: str) -> DigestSection:
    filters = replace(watch.filters, added_after=since or None)
    floor = similarity_floor(watch)
    # The floor is the hits' score (`Hit.score`: the cosine of query and paper, or of the
    # paper and its nearest library paper), which `min_score` keeps to.
    if watch.query:
        hits = engine.search(watch.query, watch.k, filters=filters, min_score=floor)
    else:
        hits = engine.similar_to_papers(watch.papers, watch.k, filters=filters,
                                        min_score=floor)
    return DigestSection(watch, list(hits), engine.added([hit.paper.id for hit in hits]),
                         engine.count(filters), floor, since)
