"""A paper read in full, over HTTP: GET /papers/{id}/passages (its passages with their
pages and sections, what a client quotes and cites) and GET /papers/{id}/file (the PDF
it was read from, which the page opens at a passage's page).

The file route serves only the file the index itself recorded for that id
(`SearchEngine.file_of`), never a path a request names, and only a PDF: an HTML snapshot
served from this origin could run as this page. It sits behind the same Host allow-list
and token layers as every route (`security`): those wrap the whole app, so a route
cannot miss them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from ..engine import SearchEngine
from .apierror import ApiError
from .schemas import ErrorOut, PassageOut

__all__ = ["PDF_MAGIC", "fulltext_routes"]

#: How every PDF file starts (ISO 32000-1, 7.5.2): a file the index names is served only
#: when it still is one.
PDF_MAGIC = b"%PDF-"
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "no such paper, or it has no PDF on disk"},
    422: {"model": ErrorOut}}
_PDF: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}},
          "description": "the PDF, shown in the browser (Content-Disposition: inline)"}}


def _pdf_of(engine: SearchEngine, paper_id: str) -> Path:
    """The PDF the index read `paper_id` from; a 404 naming the reason when there is none
    to serve. The message never shows the path: the server's files are its own."""
    recorded = engine.file_of(paper_id)  # PaperNotFoundError: the app's 404
    if not recorded:
        raise ApiError(404, f"paper '{paper_id}' was not read from a file, so there is no "
                            "PDF to open; its abstract is all the index holds", "paper_id")
    path = Path(recorded)
    try:
        with path.open("rb") as file:
            start = file.read(len(PDF_MAGIC))
    except OSError:
        raise ApiError(404, f"the PDF of paper '{paper_id}' is no longer where it was "
                            "indexed; put it back, or re-index the folder it came from",
                       "paper_id") from None
    if start != PDF_MAGIC:
        raise ApiError(404, f"the file of paper '{paper_id}' is not a PDF; only PDFs are "
                            "served", "paper_id")
    return path


def fulltext_routes(engine: SearchEngine) -> APIRouter:
    """The passage and file routes; include them before /papers/{id}, whose path would
    otherwise take the ids of /papers/{id}/file too (ids may contain '/')."""
    router = APIRouter(tags=["papers"], responses=_NOT_FOUND)

    @router.get("/papers/{paper_id:path}/passages", response_model=list[PassageOut])
    def passages(paper_id: str) -> list[dict[str, object]]:
        """The passages of a paper read in full, in reading order, each with its text,
        1-based PDF `page` (null when the source had no pages), printed `page_label`
        ("" when the PDF names none) and `section` heading ("" before the first): what
        a client quotes and cites. An empty list for a paper the index knows by its
        abstract alone."""
        return [passage.to_dict() for passage in engine.passages(paper_id)]

    @router.get("/papers/{paper_id:path}/file", response_class=FileResponse, responses=_PDF)
    def paper_file(paper_id: str) -> FileResponse:
        """The PDF a paper was read in full from, as application/pdf with
        `Content-Disposition: inline`, so that a browser shows it; append
        `#page=N` (a passage's `page`, not its label) to open it at that page. Only the
        file the index recorded for this id is ever served; 404 when the paper was not
        read from a file, its file is gone from disk, or it is not a PDF."""
        path = _pdf_of(engine, paper_id)
        return FileResponse(path, media_type="application/pdf", filename=path.name,
                            content_disposition_type="inline",
                            headers={"Cache-Control": "no-cache"})

    return router
