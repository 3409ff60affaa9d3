"""Research papers that are only PDFs: title, abstract and authors from the first pages.

`extract_pdf(path)` reads at most the first `PAGES_READ` pages and returns a
`PdfExtraction`: each field with where it came from (the file's metadata, the largest
lines of page 1, the block after the Abstract heading, ...), or the reason nothing could
be read (encrypted, scanned, damaged). It never raises for a bad file, so one damaged PDF
never stops a folder; the `pdf` format (`embedsearch build paper.pdf`, or a folder of
them) turns each extraction into a `Paper` or a `Skipped` entry.

Why pypdfium2 (PDFium, the PDF engine of Chrome, Apache-2.0/BSD-3) rather than pypdf:
PDFium is C++ and reads a page's text in milliseconds where pure-Python parsers take
tens to hundreds; it opens damaged files the way a browser does (rebuilding a broken
cross-reference table, reading what is left of a truncated file); and it gives every
character's font size, weight, box and angle, which is what tells a title from an
author line and a heading from its text.

A C library can still hang or crash on a hostile file. Each PDF is therefore read in a
worker process (one for the whole run, started on first use, about 0.15 s, and
replaced after a failure), under a time limit (`TIMEOUT_S`) and an address-space limit;
a file that exceeds either is skipped as damaged and the run goes on.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...papers import Paper, derive_title
from ...text.identifiers import normalise_arxiv_id
from ..base import Located, Skipped, register_format, source_name
from .hyphens import Spelling, mend_breaks

if TYPE_CHECKING:
    from .layout import Document, Line

__all__ = ["MAX_BYTES", "PAGES_READ", "TIMEOUT_S", "PdfExtraction", "extract_pdf",
           "read_pdf_file", "report_note"]

#: Pages read from the start of each PDF: the title, authors and abstract are on the
#: first (a cover page or a long author list can push the abstract to the second).
PAGES_READ = 3
#: Larger files are refused unread: a paper is rarely over 50 MB, even with figures.
MAX_BYTES = 200_000_000
#: Seconds one PDF may take in the worker: reading three pages takes 5-50 ms.
TIMEOUT_S = 20.0

_NO_TEXT_SCANNED = "no text layer: scanned pages? (OCR it first, e.g. with ocrmypdf)"
_NO_TEXT = "no text on its first pages"
_ARXIV_STAMP = re.compile(r"arXiv:\s*(\d{4}\.\d{4,5})(?:v\d+)?")
# PDFium is not thread-safe: one extraction at a time in this process.
_LOCK = threading.Lock()


@dataclasses.dataclass(frozen=True)
class PdfExtraction:
    """What the first pages of one PDF gave, and where each field came from.

    Sources say where a field was found: `title_source` "metadata", "large-font
    lines on page 1" or "first set-apart lines on page 1" (capitals, or only a little
    larger); `abstract_source` "block after the Abstract heading", "text run in after
    “Abstract” on its line", "block after the Summary heading", "paragraph before the
    first section (no Abstract heading)" or "first paragraph on page N (no Abstract
    heading)"; `authors_source` "metadata" or "lines
    between the title and the abstract". A field not found is "" (authors `()`) with
    source "". `skipped` is why nothing could be read ("encrypted: ...", "no text
    layer: ...", "damaged: ..."), "" when the file was read.
    """

    path: Path
    title: str = ""
    title_source: str = ""
    abstract: str = ""
    abstract_source: str = ""
    authors: tuple[str, ...] = ()
    authors_source: str = ""
    arxiv_id: str = ""
    pages: int = 0
    skipped: str = ""

    @property
    def ok(self) -> bool:
        """Whether the file could be read (it may still lack a title or an abstract)."""
        return not self.skipped

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready plain data (how the worker process sends it back)."""
        data = dataclasses.asdict(self)
        data["path"], data["authors"] = str(self.path), list(self.authors)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PdfExtraction:
        known = {field.name for field in dataclasses.fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["path"], values["authors"] = Path(values["path"]), tuple(values["authors"])
        return cls(**values)


def extract_pdf(path: str | os.PathLike[str], *, timeout: float | None = TIMEOUT_S,
                isolated: bool = True) -> PdfExtraction:
    """Title, abstract and authors of the PDF at `path`, each with its source.

    Never raises for a bad file: an encrypted, scanned, damaged, truncated or missing
    file gives an extraction whose `skipped` says why. `isolated` (the default) reads
    it in the worker process, so that a file that hangs or crashes PDFium costs
    `timeout` seconds and nothing else; `isolated=False` reads it in this process
    (no time limit), as the worker itself does.
    """
    file = Path(path)
    if isolated:
        from .worker import shared_worker

        return shared_worker().extract(file, timeout)
    with _LOCK:
        return _extract_here(file)


def _extract_here(path: Path) -> PdfExtraction:
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    from .layout import Unreadable, open_document

    try:
        document = open_document(path, MAX_BYTES)
    except Unreadable as exc:
        return PdfExtraction(path, skipped=str(exc))
    try:
        return _read_fields(document)
    except pdfium.PdfiumError as exc:  # a page that does not load
        return PdfExtraction(path, pages=document.pages, skipped=f"damaged: {exc}")
    finally:
        document.close()


def _read_fields(document: Document) -> PdfExtraction:
    """The fields of an open document. Page 1 is read first; the pages after it only
    when page 1 has no Abstract heading, which keeps most files to one page's cost."""
    from .fields import abstract_of, authors_of, join_lines, title_of

    count = min(PAGES_READ, document.pages)
    pages: list[list[Line]] = []
    rotated = ""
    for index in range(count):
        lines, turned = document.lines(index)
        rotated += turned
        if lines or pages:  # a cover page of images is not page 1
            pages.append(lines)
        if len(pages) == 1 and abstract_of(pages, 0, fallback=False) is not None:
            break
    if not pages:
        scanned = any(document.has_images(index) for index in range(count))
        return PdfExtraction(document.path, pages=document.pages,
                             skipped=_NO_TEXT_SCANNED if scanned else _NO_TEXT)
    first = pages[0]
    title, after = title_of(first, document.metadata.get("Title", ""))
    abstract = abstract_of(pages, after)
    authors, authors_source = authors_of(first, after, document.metadata.get("Author", ""))
    stamp = _ARXIV_STAMP.search(rotated + " " + " ".join(line.text for line in first[:40]))
    # A word broken at a line end is spelt as the pages read spell it elsewhere.
    spelling = Spelling.of(join_lines(page) for page in pages)
    return PdfExtraction(
        document.path, title=mend_breaks(title.text, spelling) if title else "",
        title_source=title.source if title else "",
        abstract=mend_breaks(abstract.text, spelling) if abstract else "",
        abstract_source=abstract.source if abstract else "",
        authors=authors, authors_source=authors_source,
        arxiv_id=normalise_arxiv_id(stamp.group(1)) if stamp else "", pages=document.pages)


def report_note(extraction: PdfExtraction, entry: str) -> dict[str, object]:
    """One `--report` entry for a paper read from a PDF: what was found, and where.

    It has the keys of a skipped entry (`file`, `line`, `entry`, `reason`, `malformed`)
    and `extracted`, the fields with their sources.
    """
    found = [f"{name} from the {source}" if source == "metadata" else f"{name}: {source}"
             for name, source in (("title", extraction.title_source),
                                  ("abstract", extraction.abstract_source),
                                  ("authors", extraction.authors_source)) if source]
    return {"file": str(extraction.path), "line": None, "entry": entry,
            "reason": "read from the PDF: " + "; ".join(found), "malformed": False,
            "extracted": {"title": extraction.title, "title_from": extraction.title_source,
                          "abstract_start": extraction.abstract[:200],
                          "abstract_from": extraction.abstract_source,
                          "authors": list(extraction.authors),
                          "authors_from": extraction.authors_source,
                          "arxiv_id": extraction.arxiv_id}}


def read_pdf_file(path: Path, notes: list[dict[str, object]] | None = None
                  ) -> Iterator[Located | Skipped]:
    """The paper of one PDF, known by the file's name; what was found and where goes to
    `notes` (the report). A file that cannot be read is one `Skipped`, marked malformed
    when it is damaged."""
    extraction = extract_pdf(path)
    if extraction.skipped:
        yield Skipped(path, None, path.name, extraction.skipped,
                      malformed=extraction.skipped.startswith("damaged"))
        return
    if not extraction.title and not extraction.abstract:
        yield Skipped(path, None, path.name,
                      "neither a title nor an abstract found on its first pages")
        return
    paper = Paper(id=source_name(path), abstract=extraction.abstract,
                  title=extraction.title or derive_title(extraction.abstract),
                  title_derived=not extraction.title, authors=extraction.authors,
                  arxiv_id=extraction.arxiv_id)
    if notes is not None:
        notes.append(report_note(extraction, paper.id))
    yield paper, f"{path}: page 1"


# Registered without rebinding the name, which keeps the `notes` parameter in its type.
register_format("pdf", (".pdf",),
                "a paper as a PDF: title, abstract and authors from its first pages"
                )(read_pdf_file)
