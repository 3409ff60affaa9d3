"""Bibliographies in and out. POST /bibliography: a reader's own bibliography file, read
as the command line reads it, each entry matched to the index. The page imports a .bib
or .ris this way: entries the index holds become ids of a reading list, the others
(title-only ones included) stay records it sends to POST /similar as examples. POST
/export: papers (hits as the API gave them, or records) as a BibTeX, RIS, CSL-JSON, CSV
or JSON lines file, written by the command line's own writers (the page's export
buttons)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel

from ..engine import SearchEngine
from ..errors import InputError
from ..exporting import EXPORT_FORMATS, export
from ..papers import Paper
from ..readers import formats, read_bibliography
from ..readers.records import papers_from_records
from .apierror import ApiError
from .schemas import BibliographyIn, BibliographyOut, ErrorOut, ExportIn

__all__ = ["bibliography_routes", "papers_in"]


def papers_in(name: str, records: list[BaseModel]) -> list[Paper]:
    """A request's paper records as papers (a title alone will do); a record at fault is
    named by its place in the body, `papers.3.year`."""
    dumped = [record.model_dump() for record in records]
    for record in dumped:  # a title cut from the abstract is cut again, not a title
        if record.pop("title_derived", False):
            record["title"] = ""
    try:
        return papers_from_records(dumped, title_only=True)
    except InputError as exc:
        where = f"{name}.{exc.record - 1}" if exc.record else name
        parameter = f"{where}.{exc.field}" if exc.field else where
        raise ApiError(422, f"{parameter}: {exc.reason}", parameter) from None


def _suffix(name: str) -> str:
    """The file's format extension, refused unless a format claims it (no .gz here)."""
    suffix = Path(name).suffix.lower()
    known = {ext for spec in formats().values() for ext in spec.extensions}
    if suffix not in known:
        raise ApiError(422, f"name: cannot tell the format of '{name[:100]}' from its "
                            f"extension; use one of {', '.join(sorted(known))}", "name")
    return suffix


def _read(body: BibliographyIn) -> Any:
    """The file's papers and skipped entries; errors name the file as the reader sent
    it, not the temporary copy read here."""
    with tempfile.TemporaryDirectory(prefix="embedsearch-bib-") as folder:
        path = Path(folder) / f"upload{_suffix(body.name)}"
        path.write_text(body.text, encoding="utf-8")
        try:
            return read_bibliography([path], title_only=True)
        except InputError as exc:
            message = str(exc).replace(str(path), Path(body.name).name)
            raise ApiError(422, f"text: {message}", "text") from None


def bibliography_routes(engine: SearchEngine) -> APIRouter:
    router = APIRouter(tags=["search"])

    @router.post("/bibliography", response_model=BibliographyOut,
                 responses={422: {"model": ErrorOut}})
    def bibliography(body: BibliographyIn) -> dict[str, Any]:
        """Read a bibliography (BibTeX, RIS, CSL-JSON, JSON lines) as `embedsearch
        similar --from` does, entries without an abstract kept by their titles, and
        match each entry to the index by id, DOI, arXiv id or title. Nothing is stored."""
        found = _read(body)
        matches = engine.match_papers(found.papers)
        return {"papers": [{**paper.to_dict(), "match": match}
                           for paper, match in zip(found.papers, matches)],
                "skipped": [{key: value for key, value in entry.to_dict().items()
                             if key != "file"} for entry in found.skipped]}

    @router.post("/export", response_class=Response, responses={
        200: {"content": {format.media_type: {} for format in EXPORT_FORMATS.values()},
              "description": "the file's text"}, 422: {"model": ErrorOut}})
    def export_papers(body: ExportIn) -> Response:
        """The papers as a file in `format`, as `embedsearch search --format` writes it:
        BibTeX, RIS and CSL-JSON (what Zotero, Mendeley, EndNote and pandoc import) hold
        each paper once, CSV and JSON lines a row each. Records may be hits as this API
        returned them (fields it does not read are ignored), or a title alone: a paper
        the index holds (same id) is written as the index has it. Nothing is stored."""
        chosen = EXPORT_FORMATS[body.format]
        given = papers_in("papers", list(body.papers))
        stored = engine.get_many(paper.id for paper in given)
        text = export([stored.get(paper.id, paper) for paper in given], body.format)
        return Response(text, media_type=f"{chosen.media_type}; charset=utf-8")

    return router
