"""Research papers that are only PDFs: title, abstract and authors from the first pages,
and the body read in full as passages with their pages.

`extract_pdf(path)` reads the title, abstract and authors from at most the first
`PAGES_READ` pages, then the body (up to `MAX_BODY_PAGES` pages) as `Passage`s, each
with its page, printed page label and section; `full_text=False` reads the first pages
only. It returns a `PdfExtraction`: each field with where it came from (the file's
metadata, the largest lines of page 1, the block after the Abstract heading, ...), or
the reason nothing could be read (encrypted, scanned, damaged), and the reason the body
could not be read while the first pages could (`body_skipped`). It never raises for a
bad file, so one damaged PDF never stops a folder; the `pdf` format (`embedsearch build
paper.pdf`, or a folder of them) turns each extraction into a `Paper` or a `Skipped`
entry.

Why pypdfium2 (PDFium, the PDF engine of Chrome, Apache-2.0/BSD-3) rather than pypdf:
PDFium is C++ and reads a page's text in milliseconds where pure-Python parsers take
tens to hundreds; it opens damaged files the way a browser does (rebuilding a broken
cross-reference table, reading what is left of a truncated file); and it gives every
character's font size, weight, box and angle, which is what tells a title from an
author line and a heading from its text.

A C library can still hang or crash on a hostile file. Each PDF is therefore read in a
worker process (one for the whole run, started on first use, about 0.15 s, and
replaced after a failure), under a time limit (`TIMEOUT_S` for the first pages, and
`worker.body_limit` of its pages for the body) and an address-space limit; a file whose
first pages exceed either is skipped as damaged, one whose body does keeps its title and
abstract, and the run goes on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ...papers import Paper, derive_title
from ..base import Located, Skipped, register_format, source_name
from .body import MAX_BODY_PAGES
from .extraction import MAX_BYTES, PAGES_READ, PdfExtraction, extract_here

__all__ = ["MAX_BODY_PAGES", "MAX_BYTES", "PAGES_READ", "TIMEOUT_S", "PdfExtraction",
           "extract_pdf", "read_pdf_file", "report_note"]

#: Seconds one PDF's first pages may take in the worker: reading three pages takes
#: 5-50 ms. The body has its own limit, by its pages (`worker.body_limit`).
TIMEOUT_S = 20.0


def extract_pdf(path: str | os.PathLike[str], *, full_text: bool = True,
                timeout: float | None = TIMEOUT_S, body_timeout: float | None = None,
                isolated: bool = True) -> PdfExtraction:
    """Title, abstract and authors of the PDF at `path`, each with its source, and
    (`full_text`, the default) its body's passages with their pages.

    Never raises for a bad file: an encrypted, scanned, damaged, truncated or missing
    file gives an extraction whose `skipped` says why, one whose body alone cannot be
    read keeps its fields and says why in `body_skipped`. `isolated` (the default)
    reads it in the worker process, so that a file that hangs or crashes PDFium costs
    `timeout` seconds (the first pages) or `body_timeout` (the body; by default
    `worker.body_limit` of its pages) and nothing else; `isolated=False` reads it in
    this process (no time limit), as the worker itself does.
    """
    file = Path(path)
    if isolated:
        from .worker import shared_worker

        return shared_worker().extract(file, timeout, full_text=full_text,
                                       body_timeout=body_timeout)
    return extract_here(file, full_text)


def report_note(extraction: PdfExtraction, entry: str) -> dict[str, object]:
    """One `--report` entry for a paper read from a PDF: what was found, and where.

    It has the keys of a skipped entry (`file`, `line`, `entry`, `reason`, `malformed`)
    and `extracted`, the fields with their sources.
    """
    found = [f"{name} from the {source}" if source == "metadata" else f"{name}: {source}"
             for name, source in (("title", extraction.title_source),
                                  ("abstract", extraction.abstract_source),
                                  ("authors", extraction.authors_source)) if source]
    extracted: dict[str, object] = {
        "title": extraction.title, "title_from": extraction.title_source,
        "abstract_start": extraction.abstract[:200],
        "abstract_from": extraction.abstract_source, "authors": list(extraction.authors),
        "authors_from": extraction.authors_source, "arxiv_id": extraction.arxiv_id}
    body = _body_note(extraction)
    if body:  # read in full (or asked to be): what the body gave
        found.append(body)
        extracted.update(passages=len(extraction.passages),
                         body_pages=extraction.body_pages,
                         body_skipped=extraction.body_skipped)
    return {"file": str(extraction.path), "line": None, "entry": entry,
            "reason": "read from the PDF: " + "; ".join(found), "malformed": False,
            "extracted": extracted}


def _body_note(extraction: PdfExtraction) -> str:
    """What the body gave, for the report: "36 passages from 6 pages", or why it was
    not read; "" when only the first pages were asked for."""
    if extraction.body_skipped:
        return f"body not read: {extraction.body_skipped}"
    if not extraction.body_pages:
        return ""
    count = len(extraction.passages)
    of = (f" (the first {extraction.body_pages} of {extraction.pages})"
          if extraction.body_pages < extraction.pages else "")
    return (f"body: {count} passage{'s' if count != 1 else ''} from "
            f"{extraction.body_pages} page{'s' if extraction.body_pages != 1 else ''}{of}")


def read_pdf_file(path: Path, notes: list[dict[str, object]] | None = None, *,
                  full_text: bool = True) -> Iterator[Located | Skipped]:
    """The paper of one PDF, known by the file's name, with its body's passages and the
    file's path (`full_text`, the default; without, its first pages only, as a record
    of its title and abstract); what was found and where goes to `notes` (the report).
    A file that cannot be read is one `Skipped`, marked malformed when it is damaged."""
    extraction = extract_pdf(path, full_text=full_text)
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
                  arxiv_id=extraction.arxiv_id, passages=extraction.passages,
                  # Read in full, a paper knows its file, which a hit's page opens; a
                  # record of the first pages is what it was before full text.
                  file=str(path.resolve()) if full_text else "")
    if notes is not None:
        notes.append(report_note(extraction, paper.id))
    yield paper, f"{path}: page 1"


# Registered without rebinding the name, which keeps the `notes` parameter in its type.
register_format("pdf", (".pdf",),
                "a paper as a PDF: title, abstract and authors from its first pages, "
                "its body as passages with their pages"
                )(read_pdf_file)
