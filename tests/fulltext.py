"""An index with a paper read in full from a real PDF, for the faces' tests (HTTP, the
page, MCP): 25 seed abstracts, and "host", whose passages are five other seed papers'
abstracts, one section a page (test_full_text's `host_paper`), typeset as a PDF here;
"lost", whose PDF is gone, and "notpdf", whose file is text."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from embedsearch import Paper
from embedsearch.bundled import corpus_files
from embedsearch.readers import read_papers
from tests.storage.local.test_full_text import host_paper

__all__ = ["DONOR", "fulltext_papers", "write_pdf"]

DONOR = 2  # the donor whose abstract is section 3 on PDF page 4, printed page 102


def write_pdf(path: Path, paper: Paper) -> Path:
    """A real PDF of `paper`'s passages, each on the page its record names."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pages: dict[int, list[str]] = {}
    for passage in paper.passages:
        pages.setdefault(passage.page or 1, []).append(passage.text)
    for number in range(1, max(pages) + 1):
        text = pdf.beginText(50, 780)
        for line in pages.get(number, [paper.title]):
            text.textLine(line[:90])
        pdf.drawText(text)
        pdf.showPage()
    pdf.save()
    return path


def fulltext_papers(folder: Path) -> tuple[list[Paper], list[Paper]]:
    """The index's papers (25 abstracts; "host" with its PDF; "lost", whose PDF is gone;
    "notpdf", whose file is text) and the donors whose abstracts are host's body."""
    seed = read_papers(corpus_files())
    abstracts, donors = seed[:25], seed[25:30]
    host = host_paper(donors)
    host = replace(host, file=str(write_pdf(folder / "host.pdf", host)))
    lost = replace(host_paper(donors[:1], "lost"), file=str(folder / "gone.pdf"))
    text = folder / "notes.txt"
    text.write_text("%PDF? no, plain notes", encoding="utf-8")
    notpdf = replace(host_paper(donors[1:2], "notpdf"), file=str(text))
    return [*abstracts, host, lost, notpdf], donors
