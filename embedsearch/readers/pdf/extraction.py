"""What one PDF gives, read in this process: the `PdfExtraction` and `extract_here`,
which the worker process runs for each file (and `extract_pdf` when asked not to
isolate). Here, not in the package's face, so that the worker and the face both import
it and neither imports the other.

A file is read in two stages (`extract_stages`): its first pages (title, abstract,
authors), then, when the full text is asked for, its body (`body`), as passages. The
worker answers after each, so that a body that hangs or crashes PDFium costs the
passages and never the title and abstract already read.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...papers import Passage
from ...text.identifiers import normalise_arxiv_id
from .hyphens import Spelling, mend_breaks

if TYPE_CHECKING:
    from .layout import Document, Line

__all__ = ["MAX_BYTES", "PAGES_READ", "PdfExtraction", "extract_here", "extract_stages"]

#: Pages read from the start of each PDF: the title, authors and abstract are on the
#: first (a cover page or a long author list can push the abstract to the second).
PAGES_READ = 3
#: Larger files are refused unread: a paper is rarely over 50 MB, even with figures.
MAX_BYTES = 200_000_000

_NO_TEXT_SCANNED = "no text layer: scanned pages? (OCR it first, e.g. with ocrmypdf)"
_NO_TEXT = "no text on its first pages"
_NO_BODY = "no text found beyond the title and abstract"
# The abstract sources (`fields.abstract_of`) of an abstract with no heading of its own:
# the first paragraph of the text, which the body goes on from.
_UNHEADED_ABSTRACT = ("first paragraph", "paragraph before")
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

    Read in full, `passages` is its body (`body`), read from its first `body_pages`
    pages; `body_skipped` is why the body could not be read ("" when it was, or was not
    asked for), while the fields of the first pages stand.
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
    passages: tuple[Passage, ...] = ()
    body_pages: int = 0
    body_skipped: str = ""

    @property
    def ok(self) -> bool:
        """Whether the file could be read (it may still lack a title or an abstract)."""
        return not self.skipped

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready plain data (how the worker process sends it back)."""
        data = dataclasses.asdict(self)
        data["path"], data["authors"] = str(self.path), list(self.authors)
        data["passages"] = [passage.to_dict() for passage in self.passages]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PdfExtraction:
        known = {field.name for field in dataclasses.fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["path"], values["authors"] = Path(values["path"]), tuple(values["authors"])
        values["passages"] = tuple(Passage.from_dict(passage)
                                   for passage in values.get("passages", ()))
        return cls(**values)


def extract_here(path: Path, full_text: bool = False) -> PdfExtraction:
    """The fields of the PDF at `path` (and its body's passages, with `full_text`),
    read in this process (no time limit)."""
    stages = extract_stages(path, full_text)
    try:
        return list(stages)[-1]
    finally:
        stages.close()


def extract_stages(path: Path, full_text: bool = False
                   ) -> Generator[PdfExtraction, None, None]:
    """What the PDF at `path` gives, stage by stage: the fields of its first pages,
    then, with `full_text` and when the file could be read, the same with its body's
    passages. One file at a time, as PDFium is not thread-safe: the lock is held until
    the last stage has been taken (or the iterator closed)."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    from .layout import Unreadable, open_document

    with _LOCK:
        try:
            document = open_document(path, MAX_BYTES)
        except Unreadable as exc:
            yield PdfExtraction(path, skipped=str(exc))
            return
        try:
            try:
                fields = _read_fields(document)
            except pdfium.PdfiumError as exc:  # a page that does not load
                yield PdfExtraction(path, pages=document.pages, skipped=f"damaged: {exc}")
                return
            yield fields
            if full_text and fields.ok:
                yield _with_body(document, fields)
        finally:
            document.close()


def _with_body(document: Document, fields: PdfExtraction) -> PdfExtraction:
    """`fields` with the passages of `document`'s body, or why it could not be read."""
    import pypdfium2 as pdfium

    from ...passages import split_passages
    from .body import read_body

    headed = not fields.abstract_source.startswith(_UNHEADED_ABSTRACT)
    try:
        blocks, pages = read_body(document, title=fields.title, abstract=fields.abstract,
                                  headed=headed)
    except pdfium.PdfiumError as exc:
        return dataclasses.replace(fields, body_skipped=f"damaged: a page of its body "
                                                        f"could not be read ({exc})")
    passages = split_passages(blocks)
    return dataclasses.replace(fields, passages=passages, body_pages=pages,
                               body_skipped="" if passages else _NO_BODY)


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
