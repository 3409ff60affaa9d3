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

import os
from collections.abc import Iterator
from pathlib import Path

from ...papers import Paper, derive_title
from ..base import Located, Skipped, register_format, source_name
from .extraction import MAX_BYTES, PAGES_READ, PdfExtraction, extract_here

__all__ = ["MAX_BYTES", "PAGES_READ", "TIMEOUT_S", "PdfExtraction", "extract_pdf",
           "read_pdf_file", "report_note"]

#: Seconds one PDF may take in the worker: reading three pages takes 5-50 ms.
TIMEOUT_S = 20.0


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
    return extract_here(file)


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
