"""Zotero items read in full: Zotero's own full-text cache where it has one (pages at its
form feeds, headings, no running heads or reference list), else the PDF; EPUB and web
snapshots through their caches; today's reading with `full_text` off."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedsearch.papers import Paper
from embedsearch.readers import ZoteroLibrary, read_bibliography, read_papers
from embedsearch.readers.pdf import PdfExtraction
from embedsearch.readers.zotero.fulltext import cache_blocks
from tests.readers.test_pdf import one_column
from tests.zotero_library import ZoteroWriter

ABSTRACT = "We study message passing on molecular graphs and predict their properties."
#: What only the cache says (the PDF, typeset by test_pdf.one_column, never does).
CACHED_CLAIM = ("Zero-padding shortcuts lost two points of accuracy against projection "
                "shortcuts on the molecular benchmark.")
READS_PDF_BODIES = hasattr(PdfExtraction(Path("x.pdf")), "passages")


def zotero7_cache(pages: list[list[str]], head: str = "Journal of Graph Learning 12 (2024)"
                  ) -> str:
    """Text as Zotero 7 writes a PDF's cache (its PDF worker's getFullText): a paragraph
    a line, each page ending in a blank line, a form feed between pages; here each page
    with a running head and its page number, as a journal prints them."""
    printed = [[head.replace("12", str(11 + number)), *paragraphs, str(number + 340)]
               for number, paragraphs in enumerate(pages, 1)]
    return "\f".join("\n".join(page) + "\n\n" for page in printed)


BODY = [
    ["Graph networks for molecules", "Ada Lovelace", "Abstract", ABSTRACT,
     "1 Introduction", "Molecules are graphs of atoms. Message passing reads them well."],
    ["2 Method", "We pass messages along bonds for six rounds. " + CACHED_CLAIM,
     "3 Results", "Accuracy rose on every split of the benchmark."],
    ["References", "[1] A. Author. Another paper about graphs. 2019.",
     "[2] B. Author. Yet another paper. 2020.", "A Proof of Lemma 2",
     "The appendix restates the lemma and proves it by induction."],
]


@pytest.fixture
def zotero(tmp_path: Path) -> Iterator[ZoteroWriter]:
    writer = ZoteroWriter(tmp_path / "Zotero")
    yield writer
    writer.close()


def _paper(writer: ZoteroWriter, key: str, **options: bool) -> Paper:
    papers = {p.id: p for p in read_papers([ZoteroLibrary(writer.folder, **options)],
                                           title_only=True)}
    return papers[f"zotero:{key}"]


def test_the_cache_is_read_instead_of_the_pdf(zotero: ZoteroWriter, tmp_path: Path) -> None:
    item, key = zotero.item(fields={"title": "Graph networks", "abstractNote": ABSTRACT})
    attachment = zotero.pdf(item, one_column(tmp_path / "paper.pdf").read_bytes())
    zotero.ft_cache(attachment, zotero7_cache(BODY), pages=(3, 3))
    paper = _paper(zotero, key)
    pdf = zotero.folder / "storage" / zotero.key_of(attachment) / "paper.pdf"
    assert paper.file == str(pdf)
    claim = next(p for p in paper.passages if CACHED_CLAIM in p.text)
    assert (claim.page, claim.page_label, claim.section) == (2, "", "2 Method")
    assert [p.section for p in paper.passages if p.page == 1] == [
        "", "Abstract", "1 Introduction"]  # the title and authors before any heading
    text = " ".join(p.text for p in paper.passages)
    # Running heads, page numbers and the reference list are not passages; the
    # appendix after the references is.
    assert "Journal of Graph Learning" not in text and "341" not in text
    assert "Yet another paper" not in text
    assert any(p.section == "A Proof of Lemma 2" and p.page == 3 for p in paper.passages)
    # What the item holds besides is as before: the record's abstract, title, ...
    plain = _paper(zotero, key, full_text=False)
    assert (plain.passages, plain.file) == ((), "")
    assert {k: v for k, v in paper.to_dict().items() if k != "file"} == plain.to_dict()


def test_epub_and_web_snapshots_are_read_through_their_caches(zotero: ZoteroWriter) -> None:
    book, book_key = zotero.item("book", fields={"title": "A book", "abstractNote": ABSTRACT})
    epub = zotero.attachment(book, b"PK not really an epub", "book.epub",
                             content_type="application/epub+zip")
    zotero.ft_cache(epub, "Chapter one begins.\nMolecules are graphs of atoms and bonds. "
                    + CACHED_CLAIM + "\n", chars=(120, 120))
    page, page_key = zotero.item("webpage", fields={"title": "A blog post",
                                                    "abstractNote": ABSTRACT})
    html = zotero.attachment(page, b"<html><body>snapshot</body></html>", "index.html",
                             content_type="text/html")
    zotero.ft_cache(html, "A web page about message passing on graphs of molecules.\n")
    found = _paper(zotero, book_key)
    assert found.file.endswith("book.epub") and {p.page for p in found.passages} == {None}
    assert any(CACHED_CLAIM in p.text for p in found.passages)
    snapshot = _paper(zotero, page_key)
    assert snapshot.file.endswith("index.html")
    assert snapshot.passages[0].text.startswith("A web page about message passing")


def test_a_linked_files_cache_is_in_its_storage_folder(zotero: ZoteroWriter,
                                                       tmp_path: Path) -> None:
    (tmp_path / "papers").mkdir()
    item, key = zotero.item(fields={"title": "Linked", "abstractNote": ABSTRACT})
    linked = tmp_path / "papers" / "linked.pdf"
    attachment = zotero.pdf(item, one_column(tmp_path / "paper.pdf").read_bytes(),
                            linked=linked)
    zotero.ft_cache(attachment, zotero7_cache(BODY), pages=(3, 3))
    paper = _paper(zotero, key)
    assert paper.file == str(linked) and any(CACHED_CLAIM in p.text for p in paper.passages)


@pytest.mark.parametrize("why", ["partial", "stale", "none"])
def test_a_partial_stale_or_missing_cache_gives_way_to_the_pdf(
        zotero: ZoteroWriter, tmp_path: Path, why: str) -> None:
    item, key = zotero.item(fields={"title": "Graph networks", "abstractNote": ABSTRACT})
    attachment = zotero.pdf(item, one_column(tmp_path / "paper.pdf").read_bytes())
    pdf = zotero.folder / "storage" / zotero.key_of(attachment) / "paper.pdf"
    if why != "none":  # Zotero cached 2 of 5 pages, or the file changed after it cached
        cache = zotero.ft_cache(attachment, zotero7_cache(BODY),
                                pages=(2, 5) if why == "partial" else (3, 3))
        if why == "stale":
            os.utime(cache, ns=(pdf.stat().st_mtime_ns - 10**9,) * 2)
    paper = _paper(zotero, key)
    assert not any(CACHED_CLAIM in p.text for p in paper.passages)  # not the cache's text
    if READS_PDF_BODIES:  # the PDF reader reads bodies: the PDF's own, with its file
        assert paper.passages and paper.file == str(pdf)
        assert all(p.page is not None and p.page >= 1 for p in paper.passages)
    else:
        assert (paper.passages, paper.file) == ((), "")


def test_an_attachment_without_text_is_reported_and_the_item_kept(
        zotero: ZoteroWriter, tmp_path: Path) -> None:
    item, key = zotero.item(fields={"title": "Scanned", "abstractNote": ABSTRACT})
    epub = zotero.attachment(item, b"PK", "scan.epub", content_type="application/epub+zip")
    zotero.ft_cache(epub, "\n  \n12\n\f\n")  # Zotero found only a page number
    _, bare = zotero.item(fields={"title": "No file here", "abstractNote": ABSTRACT})
    zotero.attachment(zotero.db.execute("SELECT itemID FROM items WHERE key = ?",
                                        (bare,)).fetchone()[0], None, "gone.pdf")
    found = read_bibliography([ZoteroLibrary(zotero.folder)])
    papers = {paper.id: paper for paper in found.papers}
    assert papers[f"zotero:{key}"].abstract == ABSTRACT and not papers[f"zotero:{key}"].passages
    assert papers[f"zotero:{bare}"].passages == ()  # a file not downloaded: nothing to read
    noted = [note for note in found.notes if note["entry"] == f"zotero:{key}"]
    assert [note["reason"] for note in noted] == [
        "not read in full (Zotero's full-text cache): Zotero's full-text cache holds no text"]
    assert str(noted[0]["file"]).endswith(".zotero-ft-cache")


def test_text_from_older_zotero_without_pages() -> None:
    # pdftotext (Zotero 5 and 6) wrote no page breaks and broke lines inside paragraphs,
    # words too; a blank line between paragraphs.
    text = ("1 Introduction\nSemi-supervised learning is common. We improve its predic-\n"
            "tion of labels on graphs. The semi-\nsupervised setting is hard.\n\n"
            "2 Method\nWe pass messages.\n")
    blocks = cache_blocks(text)
    assert [(b.page, b.section) for b in blocks] == [(None, "1 Introduction"),
                                                    (None, "2 Method")]
    assert "its prediction of labels" in blocks[0].text
    assert "The semi-supervised setting" in blocks[0].text  # spelled so in the text
    # A line of prose that opens with a capital letter or a number is no heading.
    prose = cache_blocks("A Transformer encoder maps the input to\nvectors of the same size.\n"
                         "2 The model is trained with\nAdam for ten epochs.\n")
    assert [b.section for b in prose] == [""]
