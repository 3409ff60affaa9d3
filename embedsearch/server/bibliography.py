"""POST /bibliography: a reader's own bibliography file, read as the command line reads
it, each entry matched to the index. The page imports a .bib or .ris this way: entries
the index holds become ids of a reading list, the others (title-only ones included)
stay records it sends to POST /similar as examples."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter

from ..engine import SearchEngine
from ..errors import InputError
from ..readers import formats, read_bibliography
from .apierror import ApiError
from .schemas import BibliographyIn, BibliographyOut, ErrorOut

__all__ = ["bibliography_routes"]


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

    return router
