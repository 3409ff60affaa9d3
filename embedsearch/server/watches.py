"""The saved searches over HTTP: GET /watches, GET /digest and GET /feeds/NAME.atom, with
the shapes of their answers (`WatchOut`, `DigestOut`).

All three read: the watches are made with `embedsearch watch add` (or
`engine.watches.add`) and are the index's, so the server sees what the command line
saved without a restart. A digest read here never marks anything read: that is the
command line's `--since-last`, and a page or a feed reader keeps its own place.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from ..engine import SearchEngine
from ..errors import QueryError
from ..text.dates import parse_since
from ..watches.digests import digest
from ..watches.feeds import atom_feed, index_name, watch_summary
from .apierror import ApiError
from .schemas import ErrorOut, FiltersOut, HitOut

__all__ = ["FEED_WINDOW", "DigestHitOut", "DigestOut", "DigestSectionOut", "WatchOut",
           "watch_routes"]

#: What a feed lists: the papers of the last 30 days (entries keep their ids, so a feed
#: reader shows each paper once however often it polls).
FEED_WINDOW = "30d"


class WatchOut(BaseModel):
    """A saved search: a query, or a library of `papers` (counted here)."""

    name: str
    kind: Literal["query", "library"]
    query: str
    papers: int
    filters: FiltersOut
    k: int
    min_similarity: float | None
    #: The least similarity its digests list: `min_similarity`, else its kind's default.
    floor: float
    source: str
    created: str
    last_digest: str


class DigestHitOut(HitOut):
    #: When the index received the paper (UTC, ISO 8601).
    added: str


class DigestSectionOut(BaseModel):
    watch: str
    looks_for: str
    #: Where this watch's window starts (UTC, ISO 8601): the digest's `since`, or the
    #: watch's last digest read on the command line ('' for the index's first paper).
    since: str
    #: The least score listed (the floor compares `score`, the number hits are ordered by).
    floor: float
    #: How many papers the index received in the window that pass the watch's filters.
    arrived: int
    hits: list[DigestHitOut]


class DigestOut(BaseModel):
    since: str
    until: str
    watches: list[DigestSectionOut]


_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorOut},
                                               422: {"model": ErrorOut}}
Since = Annotated[str | None, Query(max_length=40, description=(
    "papers the index received since then: 2026-12-01, 2026-12-01T08:00:00Z or a span "
    "back from now (7d, 24h); default: each watch's last digest read on the command line"))]


def _since(value: str | None) -> str | None:
    try:
        return parse_since(value, parameter="since") if value else None
    except QueryError as exc:
        raise ApiError(422, f"since: {exc}", "since") from None


def _watches(engine: SearchEngine, names: list[str], parameter: str = "watch"
             ) -> list[Any]:
    try:
        return [engine.watches.get(name) for name in names] if names else engine.watches.all()
    except QueryError as exc:
        raise ApiError(404, str(exc), parameter) from None


def watch_routes(engine: SearchEngine) -> APIRouter:
    """GET /watches, /digest and /feeds/{name}.atom over `engine`'s saved searches."""
    router = APIRouter(tags=["watches"], responses=_NOT_FOUND)

    @router.get("/watches", response_model=list[WatchOut])
    def watches() -> list[dict[str, Any]]:
        """The saved searches (a library's papers are counted, not listed), each with
        the similarity floor its digests use."""
        return [watch_summary(watch) for watch in engine.watches.all()]

    @router.get("/digest", response_model=DigestOut, response_model_exclude_unset=True)
    def get_digest(since: Since = None, watch: Annotated[list[str], Query(
            max_length=50, description="only these saved searches (default: all)")] = []
                   ) -> dict[str, Any]:
        """For each saved search, the papers the index received since then that match
        it, ranked, with their evidence sentences and when each arrived."""
        return digest(engine, _watches(engine, watch), since=_since(since)).to_dict()

    @router.get("/feeds/{name}.atom", response_class=Response, responses={
        200: {"content": {"application/atom+xml": {}},
              "description": "an Atom feed (RFC 4287)"}})
    def feed(name: str, request: Request, since: Since = None) -> Response:
        """One saved search as an Atom feed: the papers of the last 30 days (or since
        `since`) that match it, newest first."""
        chosen = _watches(engine, [name], "name")
        found = digest(engine, chosen, since=_since(since or FEED_WINDOW))
        # A paper without a link of its own links to its view on this server's page.
        body = atom_feed(found, index=index_name(engine.info()), self_url=str(request.url),
                         page_url=str(request.base_url))
        return Response(body, media_type="application/atom+xml; charset=utf-8")

    return router
