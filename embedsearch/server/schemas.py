"""The HTTP API's request and response shapes, and its limits.

They are pydantic models so that FastAPI validates requests (a bad parameter is a 422
naming it) and publishes them in the OpenAPI schema. A hit has the fields of one line
of `embedsearch search --json`, in the same order: both are `results.HIT_COLUMNS`. The
saved searches' shapes are `watches`', beside their routes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..search.results import HIT_COLUMNS
from ..search.retrieval import MAX_QUERY_CHARS, Mode

__all__ = [
    "BatchResult",
    "BatchSearchIn",
    "BatchSearchOut",
    "Cluster",
    "ErrorOut",
    "ExportIn",
    "ExportPaperIn",
    "FiltersOut",
    "PassageOut",
    "HealthOut",
    "HitOut",
    "Limits",
    "MapOut",
    "PaperIn",
    "PaperOut",
    "PapersIn",
    "SearchOut",
    "SimilarOut",
    "SimilarPapersIn",
    "WriteOut",
]

@dataclass(frozen=True)
class Limits:
    """What one request may ask for; documented in docs/reference/http-api.md and served
    by GET /info."""

    #: The engine's own limit, so that the CLI, the API, the page (which reads it from
    #: GET /info) and MCP take the same queries: a pasted title and abstract fits.
    query_chars: int = MAX_QUERY_CHARS
    k: int = 100
    batch: int = 64
    filter_values: int = 20
    filter_chars: int = 200
    papers_per_add: int = 500
    #: Example papers of one POST /similar (a library of starred papers): they are mostly
    #: ids of the index with a title, a few dozen bytes each.
    examples: int = 2000
    body_bytes: int = 8_000_000
    bibliography_chars: int = 5_000_000


LIMITS = Limits()
_Text = Annotated[str, Field(max_length=LIMITS.filter_chars)]
_Query = Annotated[str, Field(min_length=1, max_length=LIMITS.query_chars)]


class _Paper(BaseModel):
    id: str
    title: str
    title_derived: bool
    abstract: str
    authors: list[str]
    keywords: list[str]
    venue: str
    year: int | None
    url: str
    tldr: str
    primary_area: str
    doi: str = ""
    arxiv_id: str = ""
    collections: list[str] = []
    #: The BibTeX entry type ("article", "book", ...); "" when the source did not say.
    entry_type: str = ""
    #: The other standard bibliographic fields read (publisher, editor, pages, ...).
    bib_fields: dict[str, str] = {}
    #: The Zotero group library it is in, only when it is in one.
    library: str | None = None


class PaperOut(_Paper):
    """One paper in full (the shape of `embedsearch show --json`)."""


class ReasonOut(BaseModel):
    """An example paper a recommendation is like: its id as given, title, cosine."""

    id: str
    title: str
    similarity: float


class PassageOut(BaseModel):
    """The passage of a paper read in full that answered the query: its text, 1-based
    PDF page, printed page label ("" when the PDF names none) and section heading."""

    text: str
    page: int | None
    page_label: str
    section: str


#: The JSON types of a hit's own fields (its paper's are `_Paper`'s); which fields a hit
#: has, and in what order, is `results.HIT_COLUMNS`: a field added there without a type
#: here stops the server at import rather than vanishing from the published schema.
_HIT_TYPES: dict[str, Any] = {
    "rank": (int, ...),
    "score": (float, ...),
    "similarity": (float | None, None),
    "lexical_score": (float | None, None),
    "evidence": (str | None, None),
    "evidence_terms": (list[str] | None, None),
    "because": (list[ReasonOut] | None, None),
    "group": (str | None, None),
    "passage": (PassageOut | None, None),
}
#: What `results.hit_record` adds: batch results query_index and query, similar-paper
#: results query_id.
_HIT_EXTRAS: dict[str, Any] = {
    # A paper's Zotero group library, only where it has one (`Paper.to_dict`), as `_Paper`.
    "library": (str | None, None),
    "query_index": (int | None, None),
    "query": (str | None, None),
    "query_id": (str | None, None),
}


_HIT_DOC = """One result: rank (1-based), score (what the hits are ordered by, on the cosine
scale, so it never rises down a list: the cosine of query and paper for dense search,
the fused or BM25 ranking mapped onto its candidates' cosines for hybrid and lexical,
the cosine to its nearest example for a recommendation), the paper, similarity (the
cosine itself), the BM25 score and the evidence sentence; batch results add query_index
and query, similar-paper results query_id."""


def _hit_model() -> type[BaseModel]:
    """HitOut: the fields of `results.HIT_COLUMNS` in their order (the response's keys
    follow the model's), typed as `_Paper` types a paper's, then `_HIT_EXTRAS`."""
    paper = _Paper.model_fields
    untyped = [name for name in HIT_COLUMNS if name not in paper and name not in _HIT_TYPES]
    if untyped:
        raise TypeError(f"server.schemas has no JSON type for the hit fields {untyped}")
    columns: dict[str, Any] = {
        name: _HIT_TYPES[name] if name in _HIT_TYPES else (paper[name].annotation, paper[name])
        for name in HIT_COLUMNS}
    return create_model("HitOut", __doc__=_HIT_DOC, __module__=__name__,
                        **columns, **_HIT_EXTRAS)


# mypy cannot use a model made at run time as a type; to it a hit is any model.
if TYPE_CHECKING:
    HitOut = BaseModel
else:
    HitOut = _hit_model()


class FiltersOut(BaseModel):
    year_min: int | None
    year_max: int | None
    venues: list[str]
    keywords: list[str]
    collections: list[str] = []
    #: Only papers the index received after this instant (UTC, ISO 8601), if set.
    added_after: str | None = None
    #: Only papers of these Zotero libraries ("My Library": papers of none), if given.
    libraries: list[str] | None = None


class SearchOut(BaseModel):
    query: str
    k: int
    mode: Mode
    filters: FiltersOut
    hits: list[HitOut]


class BatchSearchIn(BaseModel):
    """Several queries answered in one encoding batch, with the same k and filters."""

    model_config = ConfigDict(extra="forbid")

    queries: Annotated[list[_Query], Field(min_length=1, max_length=LIMITS.batch)]
    k: Annotated[int, Field(ge=1, le=LIMITS.k)] = 10
    mode: Mode = "hybrid"
    year: Annotated[str, Field(max_length=20)] | None = None
    venue: Annotated[list[_Text], Field(max_length=LIMITS.filter_values)] = []
    keyword: Annotated[list[_Text], Field(max_length=LIMITS.filter_values)] = []
    collection: Annotated[list[_Text], Field(max_length=LIMITS.filter_values)] = []
    library: Annotated[list[_Text], Field(max_length=LIMITS.filter_values)] = []
    min_score: Annotated[float, Field(ge=-1, le=1)] | None = None


class BatchResult(BaseModel):
    query_index: int
    query: str
    hits: list[HitOut]


class BatchSearchOut(BaseModel):
    k: int
    mode: Mode
    filters: FiltersOut
    results: list[BatchResult]


class SimilarOut(BaseModel):
    query_id: str
    k: int
    filters: FiltersOut
    hits: list[HitOut]


class HealthOut(BaseModel):
    status: Literal["ok"]
    papers: int


class ErrorOut(BaseModel):
    """Every error: a message for people; `parameter` names the request field at fault."""

    detail: str
    parameter: str | None = None


class PaperIn(BaseModel):
    """A paper to add: an id and an abstract at least (ids already present are skipped)."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, Field(min_length=1, max_length=500)]
    abstract: Annotated[str, Field(min_length=1, max_length=100_000)]
    title: Annotated[str, Field(max_length=2_000)] = ""
    authors: Annotated[list[_Text], Field(max_length=1_000)] = []
    keywords: Annotated[list[_Text], Field(max_length=200)] = []
    venue: _Text = ""
    year: Annotated[int, Field(ge=1000, le=9999)] | None = None
    url: Annotated[str, Field(max_length=2_000)] = ""
    tldr: Annotated[str, Field(max_length=10_000)] = ""
    primary_area: _Text = ""
    doi: Annotated[str, Field(max_length=500)] = ""
    arxiv_id: Annotated[str, Field(max_length=100)] = ""
    collections: Annotated[list[_Text], Field(max_length=200)] = []
    entry_type: Annotated[str, Field(max_length=40)] = ""
    bib_fields: Annotated[dict[Annotated[str, Field(max_length=40)],
                               Annotated[str, Field(max_length=2_000)]],
                          Field(max_length=40)] = {}


class PapersIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    papers: Annotated[list[PaperIn], Field(min_length=1, max_length=LIMITS.papers_per_add)]


class ExampleIn(PaperIn):
    """A paper to start from, as for POST /papers, but a bibliography entry without an
    abstract may give its title alone (it is then encoded from its title and keywords,
    and weighs half an entry with an abstract)."""

    abstract: Annotated[str, Field(max_length=100_000)] = ""


#: How several papers rank the index (`recommending.METHODS`; a test holds them equal).
Method = Literal["clusters", "mean", "classifier", "nearest"]


class SimilarPapersIn(BaseModel):
    """Papers like these (records as for POST /papers, abstracts optional where a title
    is given; in the index or not) and unlike the `negatives`, with the filters of GET
    /search."""

    model_config = ConfigDict(extra="forbid")

    papers: Annotated[list[ExampleIn], Field(min_length=1, max_length=LIMITS.examples)]
    negatives: Annotated[list[ExampleIn], Field(max_length=LIMITS.examples)] = []
    k: Annotated[int, Field(ge=1, le=LIMITS.k)] = 10
    diverse: bool = False
    year: Annotated[str, Field(max_length=20)] | None = None
    venue: Annotated[list[_Text], Field(max_length=LIMITS.filter_values)] = []
    keyword: Annotated[list[_Text], Field(max_length=LIMITS.filter_values)] = []
    collection: Annotated[list[_Text], Field(max_length=LIMITS.filter_values)] = []
    library: Annotated[list[_Text], Field(max_length=LIMITS.filter_values)] = []
    method: Method = "clusters"
    #: Only hits at least this alike (their score: the cosine to the nearest example).
    min_score: Annotated[float, Field(ge=-1, le=1)] | None = None


class ExportPaperIn(ExampleIn):
    """A paper to export: a record as for POST /similar, or a hit or paper as this API
    returned it (`rank`, `score` and the other fields it does not read are ignored)."""

    model_config = ConfigDict(extra="ignore")

    title_derived: bool = False


class ExportIn(BaseModel):
    """Papers to write as a file in `format` (`embedsearch search --format`'s)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["bibtex", "ris", "csl-json", "csv", "jsonl"]
    papers: Annotated[list[ExportPaperIn], Field(min_length=1, max_length=LIMITS.examples)]


class BibliographyIn(BaseModel):
    """A bibliography file's text and name (its extension tells the format: .bib,
    .bibtex, .ris, .json for CSL-JSON, .jsonl)."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=200)]
    text: Annotated[str, Field(min_length=1, max_length=LIMITS.bibliography_chars)]


class BibliographyPaperOut(_Paper):
    """One entry read as a paper; `match` is the id of the index's paper it is (same
    id, DOI, arXiv id or title), or null for a paper outside the index."""

    match: str | None


class SkippedOut(BaseModel):
    """An entry passed over: where, which, why."""

    line: int | None
    entry: str
    reason: str
    malformed: bool


class BibliographyOut(BaseModel):
    papers: list[BibliographyPaperOut]
    skipped: list[SkippedOut]


class WriteOut(BaseModel):
    """What a write did: papers added (or removed), skipped as already present, and the
    index's size afterwards."""

    added: int = 0
    skipped: int = 0
    removed: int = 0
    count: int


class Cluster(BaseModel):
    id: int
    label: str
    words: list[str]
    x: float
    y: float
    size: int


class MapOut(BaseModel):
    """The corpus map: `status` is ready (the columns are filled, one entry per paper),
    computing, failed (see `detail`) or off. Point coordinates lie in [0, 1]."""

    status: Literal["ready", "computing", "failed", "off"]
    detail: str = ""
    method: str = ""
    count: int = 0
    ids: list[str] = []
    titles: list[str] = []
    x: list[float] = []
    y: list[float] = []
    cluster: list[int] = []
    clusters: list[Cluster] = []
