"""The reader's Zotero library, for the pages about reading one.

Everything else a page's examples use, the reader makes by following the README's quick
start, the tutorial, or the page's own blocks (`examples.py`); a Zotero library is the
one thing they bring. This one is where Zotero keeps it by default (`~/Zotero`), written
with Zotero's own schema (`tests/zotero_library.py`), its items the bundled sample's
papers, so that the ids and titles the pages show are the ones a reader's search finds.
"""

from __future__ import annotations

from pathlib import Path

from embedsearch.bundled import sample_papers
from tests.readers.typeset import Typeset
from tests.zotero_library import ZoteroWriter

__all__ = ["PDF_IDS", "make_pdf_folder", "make_zotero_library"]

#: The ids of the papers `make_pdf_folder` writes (a PDF is known by its file's name).
PDF_IDS = ("paper1", "paper2", "paper3")

_AREAS = ("representation learning", "reinforcement learning", "generative models",
          "language models", "optimization")


def make_zotero_library(data_dir: Path) -> None:
    """A Zotero library at `data_dir`: papers 1-10 of the sample in the collection Thesis
    (9 and 10 in its sub-collection Thesis/Background), 11-12 outside it, a book without
    an abstract, a note and an item in the trash; papers 13-14 in the group library
    "Reading Club"."""
    writer = ZoteroWriter(data_dir)
    thesis = writer.collection("Thesis")
    background = writer.collection("Background", thesis)
    for number, paper in enumerate(sample_papers()[:12], start=1):
        writer.item("conferencePaper", fields={
            "title": paper.title, "abstractNote": paper.abstract, "date": str(paper.year),
            "proceedingsTitle": paper.venue}, creators=[("Ada", "Lovelace")],
            tags=[_AREAS[number % len(_AREAS)]],
            collections=[thesis] if number <= 8 else [background] if number <= 10 else [])
    book, _ = writer.item("book", fields={"title": "Literate programming", "date": "1992"},
                          creators=[("Donald", "Knuth")], collections=[thesis])
    writer.item("note", parent=book)
    trashed, _ = writer.item(fields={"title": "A draft", "abstractNote": "Not yet."})
    writer.trash(trashed)
    club = writer.group("Reading Club", 4711)
    for paper in sample_papers()[12:14]:
        writer.item("conferencePaper", fields={
            "title": paper.title, "abstractNote": paper.abstract, "date": str(paper.year),
            "proceedingsTitle": paper.venue}, creators=[("Grace", "Hopper")], library=club)
    writer.close()


def make_pdf_folder(folder: Path) -> None:
    """A folder of three papers as PDFs, as a reader's `papers/` holds them: each is a
    paper of the sample (its title and abstract on page 1) whose body, in two columns
    with running heads and a reference list, is the abstracts of three other sample
    papers, a section each (papers 13-21: spiking networks, interpretability, 3D
    intention grounding, federated RL, ...), so that a page's question about one of
    those finds the PDF and the page it is on."""
    papers = sample_papers()
    folder.mkdir(parents=True, exist_ok=True)
    for number, paper_id in enumerate(PDF_IDS):
        host = papers[30 + number]
        sheet = Typeset(folder / f"{paper_id}.pdf", running_head=host.title[:60])
        sheet.front(host.title, "Ada Lovelace, Alan Turing", host.abstract)
        for part, donor in enumerate(papers[12 + 3 * number:15 + 3 * number], start=1):
            sheet.heading(f"{part} {' '.join(donor.title.split()[:4]).rstrip('.,')}")
            sheet.paragraph(donor.abstract)
        sheet.references([f"{paper.title}. {paper.venue} {paper.year}."
                          for paper in papers[:4]])
        sheet.save()
