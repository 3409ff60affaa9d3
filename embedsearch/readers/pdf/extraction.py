"""What one PDF's first pages give, read in this process: the `PdfExtraction` and
`extract_here`, which the worker process runs for each file (and `extract_pdf` when
asked not to isolate). Here, not in the package's face, so that the worker and the face
both import it and neither imports the other.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...text.identifiers import normalise_arxiv_id
from .hyphens import Spelling, mend_breaks

if TYPE_CHECKING:
    from .layout import Document, Line

__all__ = ["MAX_BYTES", "PAGES_READ", "PdfExtraction", "extract_here"]

#: Pages read from the start of each PDF: the title, authors and abstract are on the
#: first (a cover page or a long author list can push the abstract to the second).
PAGES_READ = 3
#: Larger files are refused unread: a paper is rarely over 50 MB, even with figures.
MAX_BYTES = 200_000_000

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


def extract_here(path: Path) -> PdfExtraction:
    """The fields of the PDF at `path`, read in this process (no time limit): one
    extraction at a time, as PDFium is not thread-safe."""
    with _LOCK:
        return _extract(path)


def _extract(path: Path) -> PdfExtraction:
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
    from .authors import authors_of
    from .fields import abstract_of, join_lines, title_of

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
