"""The FastAPI application: the JSON API over one open `SearchEngine`, and the web page.

`create_app` builds it from its arguments alone (no globals), so tests and `serve` make
as many as they need. Endpoints are plain functions run in FastAPI's thread pool; the
engine serialises its own use of the encoder, FAISS and SQLite, so concurrent requests
are safe. Every failure a request can cause is a 4xx with a message naming the
parameter at fault; the index is read-only unless `allow_writes`. Single searches that
arrive together are answered in one encoding batch (`batching`). Tokens, the Host
allow-list, CORS and the browser's security headers are layers around it (`security`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query, Request, Response, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.security import HTTPBearer
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware

from .._version import __version__
from ..engine import SearchEngine
from ..errors import IndexBusyError, InputError, PaperNotFoundError, QueryError
from ..filters import Filters
from ..search.results import hit_record
from ..search.retrieval import Mode
from .apierror import ApiError
from .assistant import assistant
from .batching import SearchBatcher
from .bibliography import bibliography_routes, papers_in
from .fulltext import fulltext_routes
from .maps import MapService
from .schemas import (
    LIMITS,
    BatchSearchIn,
    BatchSearchOut,
    ErrorOut,
    HealthOut,
    MapOut,
    PaperOut,
    PapersIn,
    SearchOut,
    SimilarOut,
    SimilarPapersIn,
    WriteOut,
)
from .security import Access, BearerAuth, BodyLimit, HostCheck, SecurityHeaders
from .watches import watch_routes

__all__ = ["ApiError", "create_app"]

STATIC = Path(__file__).resolve().parent / "static"
_ERRORS: dict[int | str, dict[str, Any]] = {422: {"model": ErrorOut}}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {**_ERRORS, 404: {"model": ErrorOut}}
_TOO_LARGE: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorOut, "description": "the request body is over the size limit"}}
#: The request field of each engine parameter named otherwise in requests: the query is
#: `q`, and the filters take one venue or keyword per repeated field.
_FIELDS = {"query": "q", "venues": "venue", "keywords": "keyword",
           "collections": "collection", "libraries": "library"}
# How long a write waits for another's: at 80k papers a write holds the lock a few
# seconds, so 30 s rides out a queue of several; clients commonly time out at 30-60 s.
WRITE_WAIT_S = 30.0
RETRY_AFTER_S = 5

# Query parameters shared by search and similar.
ModeParam = Annotated[Mode, Query(description="hybrid (BM25 and dense, fused; default), "
                                              "dense, or lexical")]
K = Annotated[int, Query(ge=1, le=LIMITS.k, description=f"how many papers (1-{LIMITS.k})")]
Year = Annotated[str | None, Query(max_length=20, description="2024, 2023-2025, 2023- or -2024")]
Venue = Annotated[list[Annotated[str, Query(max_length=LIMITS.filter_chars)]],
                  Query(max_length=LIMITS.filter_values,
                        description="only these venues (any of them; case-insensitive)")]
Keyword = Annotated[list[Annotated[str, Query(max_length=LIMITS.filter_chars)]],
                    Query(max_length=LIMITS.filter_values,
                          description="only papers with one of these author keywords")]
MinScore = Annotated[float | None, Query(ge=-1, le=1, description=(
    "only papers scoring at least this: the hit's score, the number hits are ordered by, "
    "on the cosine scale"))]
Collection = Annotated[list[Annotated[str, Query(max_length=LIMITS.filter_chars)]],
                       Query(max_length=LIMITS.filter_values,
                             description="only papers in one of these collections or their "
                                         "sub-collections (a path A/B or a name)")]
Library = Annotated[list[Annotated[str, Query(max_length=LIMITS.filter_chars)]],
                    Query(max_length=LIMITS.filter_values,
                          description="only papers of one of these Zotero libraries (a group "
                                      "library's name, or 'My Library')")]


def _error(status: int, detail: str, parameter: str | None = None) -> JSONResponse:
    return JSONResponse(ErrorOut(detail=detail, parameter=parameter).model_dump(),
                        status_code=status)


def _refusal(exc: QueryError) -> ApiError:
    """The 422 for a query the engine refuses, naming the request field at fault; an
    error that names no parameter is the query text's, all a request has left."""
    parameter = exc.parameter or "query"
    name = _FIELDS.get(parameter, parameter)
    return ApiError(422, f"{name}: {exc}", name)


def _filters(year: str | None, venue: list[str], keyword: list[str],
             collection: list[str] | None = None, library: list[str] | None = None) -> Filters:
    """Filters from request values; a bad one is a 422 naming it."""
    try:
        return Filters.parse(year=year, venues=venue, keywords=keyword,
                             collections=collection or (), libraries=library or ())
    except QueryError as exc:
        raise _refusal(exc) from None


def _search_routes(engine: SearchEngine, batcher: SearchBatcher) -> APIRouter:
    router = APIRouter(tags=["search"], responses=_ERRORS)

    @router.get("/search", response_model=SearchOut, response_model_exclude_unset=True)
    def search(q: Annotated[str, Query(min_length=1, max_length=LIMITS.query_chars,
                                       description="what you are looking for")],
               k: K = 10, mode: ModeParam = "hybrid", year: Year = None,
               venue: Venue = [], keyword: Keyword = [],
               collection: Collection = [], library: Library = [],
               min_score: MinScore = None) -> dict[str, Any]:
        """The k papers that best match q, best first, each with its evidence sentence."""
        filters = _filters(year, venue, keyword, collection, library)
        try:
            hits = batcher.search(q, k, filters, mode, min_score)
        except QueryError as exc:
            raise _refusal(exc) from None
        return {"query": q, "k": k, "mode": mode, "filters": filters.to_dict(),
                "hits": [hit_record(hit) for hit in hits]}

    @router.post("/search", response_model=BatchSearchOut, response_model_exclude_unset=True,
                 responses=_TOO_LARGE)
    def search_batch(body: BatchSearchIn) -> dict[str, Any]:
        """Several queries in one encoding batch, with the same k, mode and filters."""
        filters = _filters(body.year, body.venue, body.keyword, body.collection, body.library)
        for number, query in enumerate(body.queries):
            if not query.strip():
                raise ApiError(422, f"queries.{number}: the query is empty",
                               f"queries.{number}")
        results = engine.search_many(body.queries, body.k, filters=filters, mode=body.mode,
                                     min_score=body.min_score)
        return {"k": body.k, "mode": body.mode, "filters": filters.to_dict(), "results": [
            {"query_index": number, "query": query,
             "hits": [hit_record(hit, query_index=number, query=query) for hit in hits]}
            for number, (query, hits) in enumerate(zip(body.queries, results))]}

    @router.post("/similar", response_model=SimilarOut, response_model_exclude_unset=True,
                 responses=_TOO_LARGE)
    def similar_to_papers(body: SimilarPapersIn) -> dict[str, Any]:
        """The k papers closest to the given records, which need not be in the index:
        those it holds (same id or title) use their stored vectors and are never
        returned, the others are encoded in one batch."""
        filters = _filters(body.year, body.venue, body.keyword, body.collection, body.library)
        hits = engine.similar_to_papers(papers_in("papers", list(body.papers)), body.k,
                                        negatives=papers_in("negatives", list(body.negatives)),
                                        filters=filters, diverse=body.diverse,
                                        method=body.method, min_score=body.min_score)
        query_id = ",".join(paper.id for paper in body.papers)
        return {"query_id": query_id, "k": body.k, "filters": filters.to_dict(),
                "hits": [hit_record(hit, query_id=query_id) for hit in hits]}

    return router


def _paper_routes(engine: SearchEngine) -> APIRouter:
    router = APIRouter(tags=["papers"], responses=_NOT_FOUND)

    # Registered before /papers/{id}: ids may contain '/', and this route must win.
    @router.get("/papers/{paper_id:path}/similar", response_model=SimilarOut,
                response_model_exclude_unset=True)
    def similar(paper_id: str, k: K = 10, year: Year = None, venue: Venue = [],
                keyword: Keyword = [], collection: Collection = [], library: Library = [],
                min_score: MinScore = None) -> dict[str, Any]:
        """The k papers closest to this one (never itself), from its stored vector."""
        filters = _filters(year, venue, keyword, collection, library)
        hits = engine.similar(paper_id, k, filters=filters, min_score=min_score)
        return {"query_id": paper_id, "k": k, "filters": filters.to_dict(),
                "hits": [hit_record(hit, query_id=paper_id) for hit in hits]}

    @router.get("/papers/{paper_id:path}", response_model=PaperOut,
                response_model_exclude_unset=True)
    def paper(paper_id: str) -> dict[str, object]:
        """One paper in full."""
        return engine.get(paper_id).to_dict()

    return router


def _write_routes(engine: SearchEngine, maps: MapService, allowed: bool,
                  wait: float) -> APIRouter:
    refusal: dict[int | str, dict[str, Any]] = {
        403: {"model": ErrorOut, "description": "the server is read-only"},
        503: {"model": ErrorOut, "description": "another process is writing the index; "
                                                "retry after the Retry-After seconds"}}
    router = APIRouter(tags=["writes"], responses={**_NOT_FOUND, **refusal})

    def check() -> None:
        if not allowed:
            raise ApiError(403, "this server is read-only; start it with --allow-writes "
                                "to add or remove papers")

    @router.post("/papers", response_model=WriteOut, responses=_TOO_LARGE)
    def add(body: PapersIn) -> dict[str, int]:
        """Encode and add papers whose ids are new (atomically: all of them or none)."""
        check()
        records = [paper.model_dump() for paper in body.papers]
        try:
            added = engine.add(records, wait=wait)
        except InputError as exc:
            where = f"papers.{exc.record - 1}" if exc.record else "papers"
            parameter = f"{where}.{exc.field}" if exc.field else where
            raise ApiError(422, f"{parameter}: {exc.reason}", parameter) from None
        maps.start()
        return {"added": added, "skipped": len(records) - added, "count": len(engine)}

    @router.delete("/papers/{paper_id:path}", response_model=WriteOut)
    def remove(paper_id: str) -> dict[str, int]:
        """Remove one paper (atomically)."""
        check()
        removed = engine.remove([paper_id], wait=wait)
        maps.start()
        return {"removed": removed, "count": len(engine)}

    return router


def _service_routes(engine: SearchEngine, maps: MapService, writable: bool) -> APIRouter:
    router = APIRouter(tags=["service"])

    @router.get("/info")
    def info() -> dict[str, Any]:
        """What the index holds and how it was built, the limits, and the map's state."""
        data = engine.info().to_dict()
        data["name"] = Path(data.pop("path")).name  # the server's paths are its own
        return {**data, "writable": writable, "map": maps.status(),
                "limits": LIMITS.__dict__, "version": __version__}

    @router.get("/health", response_model=HealthOut)
    def health() -> dict[str, Any]:
        """Liveness: the index is open."""
        return {"status": "ok", "papers": len(engine)}

    @router.get("/map", response_class=Response,
                responses={200: {"model": MapOut, "content": {"application/json": {}}}})
    def corpus_map(request: Request) -> Response:
        """Every paper as a point in 2D with its cluster, and the clusters' labels."""
        gzipped = "gzip" in request.headers.get("accept-encoding", "")
        headers = {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"} if gzipped else {}
        return Response(maps.body(compressed=gzipped), media_type="application/json",
                        headers=headers)

    return router


def _page_routes() -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    # FastAPI's own /docs loads Swagger UI from a CDN and starts it with an inline script:
    # this page uses the vendored copy and a script file, so it works offline under the CSP.
    @router.get("/docs")
    def docs() -> FileResponse:
        return FileResponse(STATIC / "docs.html", headers={"Cache-Control": "no-cache"})

    return router


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.detail, exc.parameter)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # a body that is not JSON text (not even UTF-8)
            return _error(422, f"body: the request body is not valid JSON ({exc.detail})",
                          "body")
        if exc.status_code == 413:  # from BodyLimit
            return _error(413, f"body: {exc.detail}", "body")
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(IndexBusyError)
    async def busy(request: Request, exc: IndexBusyError) -> JSONResponse:
        response = _error(503, f"the index is busy with another write ({exc}); retry later")
        response.headers["Retry-After"] = str(RETRY_AFTER_S)
        return response

    @app.exception_handler(PaperNotFoundError)
    async def not_found(request: Request, exc: PaperNotFoundError) -> JSONResponse:
        return _error(404, f"no paper with id '{exc.paper_id}'", "paper_id")

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        location = [str(part) for part in first.get("loc", ())]
        name = ".".join(location[1:]) or (location[0] if location else "request")
        if location[:1] == ["body"] and first.get("type") == "json_invalid":
            name = "body"
        return _error(422, f"{name}: {_invalid(first)}", name)


def _invalid(error: Any) -> str:
    """Pydantic's message, but for a text over its limit both its length and the limit
    (pydantic names only the limit): a pasted abstract is long, and its sender needs to
    know by how much."""
    value, limit = error.get("input"), error.get("ctx", {}).get("max_length")
    if error.get("type") == "string_too_long" and isinstance(value, str) and limit:
        return f"{len(value):,} characters long; the limit is {limit:,}: shorten it"
    return str(error.get("msg", "invalid value"))


def _bearer(documented: bool) -> list[Any]:
    """The bearer scheme in the OpenAPI schema, so that /docs sends the token; it is
    `BearerAuth` that enforces it, before the body is read."""
    return [Security(HTTPBearer(auto_error=False, scheme_name="bearer"))] if documented else []


def _install_layers(app: FastAPI, access: Access) -> None:
    # Starlette runs the last one added first: headers, Host, CORS, token, body size.
    app.add_middleware(BodyLimit, limit=LIMITS.body_bytes)
    app.add_middleware(BearerAuth, access=access)
    if access.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(access.cors_origins),
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(HostCheck, access=access)
    app.add_middleware(SecurityHeaders)


def create_app(engine: SearchEngine, *, allow_writes: bool = False, compute_map: bool = True,
               token: str | None = None, read_token: str | None = None,
               allowed_hosts: Iterable[str] = (), cors_origins: Iterable[str] = (),
               write_wait: float = WRITE_WAIT_S) -> FastAPI:
    """The API and page over `engine`, which the caller opens and closes.

    `compute_map`: compute the corpus map in the background at startup when the index
    has no current one (and again after each write). `token`: writes need it as a
    bearer token (and it grants reads); `read_token`: every endpoint but the page shell
    and the API description needs one of the two. `allowed_hosts`: Host header names
    answered besides the loopback ones. `cors_origins`: pages on these origins may call
    the API (none by default). `write_wait`: seconds a write waits for the index's
    write lock before it is answered 503.
    """
    access = Access.of(token=token, read_token=read_token, allowed_hosts=allowed_hosts,
                       cors_origins=cors_origins)
    maps = MapService(engine, enabled=compute_map)
    batcher = SearchBatcher(engine)
    tools = assistant(engine)  # the MCP tools at /mcp, for AI assistants

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with tools.running():
            maps.start()
            yield
            batcher.close()

    app = FastAPI(title="embedsearch", version=__version__, lifespan=lifespan,
                  max_body_size=None, docs_url=None, redoc_url=None,
                  swagger_ui_oauth2_redirect_url=None,
                  description="Semantic search over research papers. Hits have the shape "
                              "of `embedsearch search --json` lines.")
    app.state.maps = maps
    _install_errors(app)
    reads = _bearer(access.read_token is not None)
    writes = _bearer(access.token is not None or access.read_token is not None)
    writer = _write_routes(engine, maps, allow_writes, write_wait)
    # The full-text routes before the paper's: /papers/{id} would take their paths too.
    routers = [(_search_routes(engine, batcher), reads), (fulltext_routes(engine), reads),
               (_paper_routes(engine), reads),
               (bibliography_routes(engine), reads), (watch_routes(engine), reads),
               (writer, writes), (_service_routes(engine, maps, allow_writes), reads),
               (_page_routes(), [])]
    for router, dependencies in routers:
        app.include_router(router, dependencies=dependencies)
    app.router.routes.extend(tools.routes)
    # Only the write routes change the index: a POST anywhere else (a search, an MCP
    # tool call) is a read.
    access = replace(access, reads=tuple(route for router, _ in routers if router is not writer
                                         for route in router.routes) + tools.routes)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _install_layers(app, access)
    return app
