"""Papers that are only PDFs: generated ones of each layout and failure, and real ones.

The generated PDFs (reportlab) each test one rule: a metadata title or the largest lines,
an Abstract heading or a run-in "Abstract—", two columns drawn column by column or row
by row, no Abstract heading at all; and each way a file fails (scanned, encrypted,
truncated, not a PDF, blank), alone and in a folder with good ones. The real papers
(tests/data/pdfs/real, SOURCES.md) check the rules on what publishers' tools write.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from reportlab.lib.pagesizes import letter
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.lib.utils import ImageReader, simpleSplit
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from embedsearch import InputError, read_papers
from embedsearch.readers import read_bibliography
from embedsearch.readers.pdf import MAX_BYTES, PdfExtraction, extract_pdf
from embedsearch.readers.pdf.worker import PdfWorker, shared_worker
from tests.conftest import REPO, CliResult

Cli = Callable[..., CliResult]

TITLE = "Sparse Attention Heads Learn Syntax Without Supervision"
AUTHORS = ("Ada Lovelace", "Alan Turing")
ABSTRACT = ("We study whether sparse attention heads in transformer language models learn "
            "syntactic relations without any supervision. Probing twelve models on four "
            "treebanks, we find that a small set of heads tracks dependency arcs with high "
            "precision, and that pruning them harms agreement far more than pruning random "
            "heads. These results suggest that syntax emerges in a few specialised heads.")
BODY = ("Language models are trained to predict words, yet they appear to represent "
        "grammar. This section reviews the evidence and explains how we probe attention "
        "heads, which datasets we use, and why sparsity matters for interpretation. ") * 3
WIDTH, HEIGHT = letter


# -- writing PDFs ------------------------------------------------------------------------
class Page:
    """A reportlab canvas written top down, a line at a time."""

    def __init__(self, path: Path, *, title: str | None = None, author: str | None = None,
                 encrypt: StandardEncryption | None = None, unit_size: bool = False) -> None:
        self.canvas = Canvas(str(path), pagesize=letter, encrypt=encrypt)
        # As some producers do: every font set at size 1, scaled by the text matrix.
        self.unit_size = unit_size
        if title is not None:
            self.canvas.setTitle(title)
        if author is not None:
            self.canvas.setAuthor(author)
        self.y = HEIGHT - 72

    def line(self, text: str, font: str = "Times-Roman", size: float = 10,
             x: float = 72, centred: bool = False) -> None:
        if centred:
            x = (WIDTH - stringWidth(text, font, size)) / 2
        if self.unit_size:
            drawn = self.canvas.beginText()
            drawn.setTextTransform(size, 0, 0, size, x, self.y)
            drawn.setFont(font, 1)
            drawn.textOut(text)
            self.canvas.drawText(drawn)
        else:
            self.canvas.setFont(font, size)
            self.canvas.drawString(x, self.y, text)
        self.y -= size * 1.25

    def paragraph(self, text: str, font: str = "Times-Roman", size: float = 10,
                  x: float = 72, width: float = WIDTH - 144) -> None:
        for line in simpleSplit(text, font, size, width):
            self.line(line, font, size, x)
        self.y -= size * 0.8

    def save(self) -> None:
        self.canvas.showPage()
        self.canvas.save()


def one_column(path: Path, *, title: str | None = None, heading: str | None = "Abstract",
               author: str | None = None, unit_size: bool = False) -> Path:
    """A paper in one column: title, authors, an affiliation, the Abstract, keywords, a
    numbered section. `title` goes to the metadata (reportlab writes "untitled" else)."""
    page = Page(path, title=title, author=author, unit_size=unit_size)
    page.line(TITLE, "Times-Bold", 17, centred=True)
    page.y -= 6
    page.line(" and ".join(AUTHORS), "Times-Roman", 12, centred=True)
    page.line("University of Cambridge", "Times-Italic", 10, centred=True)
    page.y -= 12
    if heading is not None:
        page.line(heading, "Times-Bold", 11, centred=True)
        page.paragraph(ABSTRACT, x=108, width=WIDTH - 216)
        page.line("Keywords: attention, syntax, probing", "Times-Italic", 10, x=108)
        page.y -= 10
    page.line("1 Introduction", "Times-Bold", 12)
    page.paragraph(ABSTRACT if heading is None else BODY)
    page.paragraph(BODY)
    page.save()
    return path


def plain_front(path: Path, *, title_font: str = "Times-Bold", title_size: float = 17,
                abstract_font: str = "Times-Bold", abstract_size: float = 8.5) -> Path:
    """A paper with no Abstract heading (pinp, JPSJ, R News): the title, the authors,
    then an abstract paragraph in its own size and weight, and "1 Introduction"."""
    page = Page(path)
    page.line(TITLE.upper() if title_size <= 10 else TITLE, title_font, title_size,
              centred=True)
    page.y -= 6
    page.line(" and ".join(AUTHORS), "Times-Roman", 9, centred=True)
    page.y -= 12
    page.paragraph(ABSTRACT, abstract_font, abstract_size)
    page.line("1 Introduction", "Times-Bold", 12)
    page.paragraph(BODY)
    page.paragraph(BODY)
    page.save()
    return path


def two_columns(path: Path, *, row_by_row: bool = False) -> Path:
    """An IEEE-style page: the title across it, the run-in "Abstract—" and "Index
    Terms—" in bold at the top of the left column, the rest body text; drawn column by
    column (as LaTeX does) or row by row across the columns (as some converters do)."""
    page = Page(path)
    page.line(TITLE, "Times-Roman", 22, centred=True)
    page.line(", ".join(AUTHORS), "Times-Roman", 11, centred=True)
    column, top = 234.0, page.y - 14
    bold = simpleSplit("Abstract—" + ABSTRACT, "Times-Bold", 9, column)
    bold += simpleSplit("Index Terms—attention, syntax, probing.", "Times-Bold", 9, column)
    left = [("Times-Bold", 9.0, text) for text in bold] + [("Times-Roman", 8.0, "")] + [
        ("Times-Roman", 8.0, "I. INTRODUCTION")] + [
        ("Times-Roman", 10.0, text) for text in simpleSplit(BODY, "Times-Roman", 10, column)]
    right = [("Times-Roman", 10.0, text)
             for text in simpleSplit(BODY * 2, "Times-Roman", 10, column)][:len(left)]
    drawn = [(row, 54.0, line) for row, line in enumerate(left)]
    drawn += [(row, 324.0, line) for row, line in enumerate(right)]
    if row_by_row:
        drawn.sort(key=lambda item: (item[0], item[1]))
    for row, x, (font, size, text) in drawn:
        page.canvas.setFont(font, size)
        page.canvas.drawString(x, top - row * 12, text)
    page.save()
    return path


def scanned(path: Path) -> Path:
    """A page that is one image of text and has no text layer."""
    from PIL import Image, ImageDraw

    image = Image.new("L", (400, 200), 255)
    ImageDraw.Draw(image).text((20, 80), "A scanned page of a paper", fill=0)
    page = Page(path)
    page.canvas.drawImage(ImageReader(image), 72, 400, width=400, height=200)
    page.save()
    return path


def blank(path: Path) -> Path:
    Page(path).save()
    return path


# -- what is read, and from where ---------------------------------------------------------
def test_metadata_title_abstract_heading_and_authors(tmp_path: Path) -> None:
    found = extract_pdf(one_column(tmp_path / "p.pdf", title=TITLE))
    assert (found.title, found.title_source) == (TITLE, "metadata")
    assert (found.abstract, found.abstract_source) == (ABSTRACT,
                                                       "block after the Abstract heading")
    assert found.authors == AUTHORS
    assert found.authors_source == "lines between the title and the abstract"
    assert found.ok and found.pages == 1


@pytest.mark.parametrize("metadata", ["untitled", "", "paper.pdf",
                                      "Microsoft Word - draft7.docx", "A Different Paper"])
def test_a_title_that_is_not_this_papers_gives_way_to_the_largest_lines(
        tmp_path: Path, metadata: str) -> None:
    found = extract_pdf(one_column(tmp_path / "p.pdf", title=metadata))
    assert (found.title, found.title_source) == (TITLE, "large-font lines on page 1")


def test_metadata_authors_when_printed_on_the_page(tmp_path: Path) -> None:
    found = extract_pdf(one_column(tmp_path / "p.pdf", author="Ada Lovelace; Alan Turing"))
    assert (found.authors, found.authors_source) == (AUTHORS, "metadata")
    # reportlab's own "anonymous" is not a name, so the page's lines are read instead.
    assert extract_pdf(one_column(tmp_path / "q.pdf")).authors_source != "metadata"


@pytest.mark.parametrize("row_by_row", [False, True], ids=["column-wise", "row-by-row"])
def test_two_columns_run_in_abstract(tmp_path: Path, row_by_row: bool) -> None:
    found = extract_pdf(two_columns(tmp_path / "ieee.pdf", row_by_row=row_by_row))
    assert found.title == TITLE
    assert found.abstract == ABSTRACT  # ends at "Index Terms—", right column left out
    assert found.abstract_source == "text run in after “Abstract” on its line"
    assert found.authors == AUTHORS


def test_no_abstract_heading_takes_the_first_paragraph(tmp_path: Path) -> None:
    found = extract_pdf(one_column(tmp_path / "p.pdf", heading=None))
    assert found.abstract == ABSTRACT
    assert found.abstract_source == "first paragraph on page 1 (no Abstract heading)"


def test_font_sizes_set_in_the_text_matrix(tmp_path: Path) -> None:
    found = extract_pdf(one_column(tmp_path / "p.pdf", unit_size=True))
    assert (found.title, found.title_source) == (TITLE, "large-font lines on page 1")
    assert (found.abstract, found.authors) == (ABSTRACT, AUTHORS)


def test_an_abstract_with_no_heading_set_apart_before_the_first_section(
        tmp_path: Path) -> None:
    found = extract_pdf(plain_front(tmp_path / "p.pdf"))
    assert found.title == TITLE
    assert (found.abstract, found.abstract_source) == (
        ABSTRACT, "paragraph before the first section (no Abstract heading)")


def test_a_title_in_capitals_at_the_bodys_size(tmp_path: Path) -> None:
    found = extract_pdf(plain_front(tmp_path / "p.pdf", title_font="Times-Roman",
                                    title_size=10, abstract_font="Times-Roman",
                                    abstract_size=10))
    assert (found.title, found.title_source) == (TITLE.upper(),
                                                 "first set-apart lines on page 1")
    assert found.abstract == ABSTRACT


def test_summary_heading(tmp_path: Path) -> None:
    found = extract_pdf(one_column(tmp_path / "joss.pdf", heading="Summary"))
    assert (found.abstract, found.abstract_source) == (ABSTRACT,
                                                       "block after the Summary heading")


def test_line_end_hyphens_of_compounds_stay(tmp_path: Path) -> None:
    # PDFium marks every hyphen ending a line as a break: "semi-" + "cooperative" was
    # read "semicooperative". The document's own spelling decides ("multi-head" and
    # "cooperate" are written on the page), then the first part ("semi", "self").
    page = Page(tmp_path / "hyphens.pdf", title=TITLE)
    page.line(TITLE, "Times-Bold", 17, centred=True)
    page.line(" and ".join(AUTHORS), "Times-Roman", 12, centred=True)
    page.y -= 12
    page.line("Abstract", "Times-Bold", 11, centred=True)
    for text in ["We study semi-", "cooperative games, where a predic-", "tion of each multi-",
                 "head model is made by self-", "supervised agents that co-", "operate."]:
        page.line(text, x=108)
    page.y -= 10
    page.line("1 Introduction", "Times-Bold", 12)
    page.paragraph("Agents cooperate through multi-head attention. " + BODY)
    page.save()
    assert extract_pdf(tmp_path / "hyphens.pdf").abstract == (
        "We study semi-cooperative games, where a prediction of each multi-head model is "
        "made by self-supervised agents that cooperate.")


def test_the_paper_record(tmp_path: Path) -> None:
    [paper] = read_papers([one_column(tmp_path / "sparse-heads.pdf", title=TITLE)])
    assert (paper.id, paper.title, paper.abstract) == ("sparse-heads", TITLE, ABSTRACT)
    assert paper.authors == AUTHORS and not paper.title_derived and paper.url == ""


# -- what is skipped, and why -------------------------------------------------------------
def encrypted(path: Path, user: str = "secret") -> Path:
    page = Page(path, encrypt=StandardEncryption(user, ownerPassword="owner"))
    page.line(TITLE, "Times-Bold", 17)
    page.paragraph(ABSTRACT)
    page.save()
    return path


def truncated(path: Path, source: Path) -> Path:
    data = source.read_bytes()
    path.write_bytes(data[:len(data) // 3])
    return path


def garbage(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 12)
    return path


def text_file(path: Path) -> Path:
    path.write_text("not a pdf at all")
    return path


@pytest.mark.parametrize("make, reason", [
    (scanned, "no text layer: scanned pages?"),
    (encrypted, "encrypted: it needs a password"),
    (blank, "no text on its first pages"),
    (garbage, "damaged: not a PDF, or its structure is broken"),
    (text_file, "damaged: not a PDF (no %PDF- header"),
])
def test_unreadable_files_name_their_reason(tmp_path: Path, make: Callable[[Path], Path],
                                            reason: str) -> None:
    found = extract_pdf(make(tmp_path / "bad.pdf"))
    assert not found.ok and found.skipped.startswith(reason), found.skipped
    assert found.title == found.abstract == ""


def test_a_password_for_the_owner_only_does_not_stop_reading(tmp_path: Path) -> None:
    assert extract_pdf(encrypted(tmp_path / "p.pdf", user="")).title == TITLE


def test_a_truncated_file_is_read_as_far_as_it_goes_or_skipped(tmp_path: Path) -> None:
    whole = one_column(tmp_path / "whole.pdf", title=TITLE)
    found = extract_pdf(truncated(tmp_path / "cut.pdf", whole))
    # PDFium rebuilds what it can: either the page survived or the file is damaged.
    assert found.abstract == ABSTRACT or found.skipped.startswith("damaged"), found


def test_a_pdf_named_directly_that_cannot_be_read_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"bad\.pdf: no papers could be read: no text layer"):
        read_papers([scanned(tmp_path / "bad.pdf")])


def test_an_absurdly_large_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.pdf"
    with open(path, "wb") as handle:  # sparse: nothing is written but the header
        handle.write(b"%PDF-1.7\n")
        handle.truncate(MAX_BYTES + 1)
    assert extract_pdf(path).skipped.startswith("too large to read: 200 MB")


def test_a_missing_file_is_skipped_not_raised(tmp_path: Path) -> None:
    assert extract_pdf(tmp_path / "gone.pdf").skipped.startswith("cannot be opened")


# -- folders ------------------------------------------------------------------------------
def test_a_folder_reads_its_good_pdfs_and_reports_the_others(tmp_path: Path,
                                                             warned: list[str]) -> None:
    folder = tmp_path / "papers"
    (folder / "2023").mkdir(parents=True)
    one_column(folder / "attention.pdf", title=TITLE)
    two_columns(folder / "2023" / "attention.pdf")  # same name, other folder
    scanned(folder / "scan.pdf")
    encrypted(folder / "locked.pdf")
    truncated(folder / "2023" / "cut.pdf", folder / "attention.pdf")
    (folder / "empty.pdf").write_bytes(b"")
    (folder / ".hidden.pdf").write_text("not read")
    (folder / "notes.txt").write_text("not a PDF: not read")

    found = read_bibliography([folder])
    ids = [paper.id for paper in found.papers]  # name order; 2023/cut.pdf may be recovered
    assert ids[0] == "2023/attention" and ids[-1] == "attention"
    skipped = {entry.label: entry for entry in found.skipped}
    assert skipped["scan.pdf"].reason.startswith("no text layer")
    assert skipped["locked.pdf"].reason.startswith("encrypted")
    assert skipped["empty.pdf"].malformed and "empty" in skipped["empty.pdf"].reason
    assert ".hidden.pdf" not in skipped and "notes.txt" not in skipped
    [message] = warned
    assert message.startswith(f"{folder}: skipped") and "scan.pdf" in message

    report = json.loads(json.dumps(found.report()))  # plain data
    notes = {entry["entry"]: entry for entry in report if "extracted" in entry}
    assert notes["attention"]["extracted"]["title_from"] == "metadata"
    assert notes["2023/attention"]["reason"].startswith("read from the PDF: title: large-font")
    assert [entry["entry"] for entry in report
            if entry["reason"].startswith("encrypted")] == ["locked.pdf"]


def test_a_folder_without_pdfs_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="is a directory with no PDF in it"):
        read_papers([tmp_path])


def test_a_folder_of_unreadable_pdfs_is_an_error(tmp_path: Path) -> None:
    scanned(tmp_path / "a.pdf")
    blank(tmp_path / "b.pdf")
    with pytest.raises(InputError, match=r"no papers could be read: no text layer.*1 more"):
        read_papers([tmp_path])


def test_strict_refuses_a_damaged_pdf_of_a_folder(tmp_path: Path) -> None:
    one_column(tmp_path / "good.pdf")
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4\n" + b"\x00" * 100)
    assert len(read_papers([tmp_path])) == 1
    with pytest.raises(InputError, match="damaged"):
        read_bibliography([tmp_path], strict=True)


def test_build_a_folder_with_a_report(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    one_column(folder / "good.pdf", title=TITLE)
    encrypted(folder / "locked.pdf")
    report = tmp_path / "report.json"
    result = cli("build", folder, "--out", tmp_path / "index", "--report", report, "--quiet")
    assert result.code == 0, result.err
    entries = {entry["entry"]: entry for entry in json.loads(report.read_text())}
    assert entries["locked.pdf"]["reason"].startswith("encrypted")
    assert entries["good"]["extracted"]["abstract_from"] == "block after the Abstract heading"


# -- bounded: a worker, a time limit, a fresh worker after a failure ------------------------
def test_a_file_over_its_time_limit_is_skipped_and_the_next_one_read(tmp_path: Path) -> None:
    paper = one_column(tmp_path / "p.pdf", title=TITLE)
    worker = PdfWorker()
    try:
        assert worker.extract(paper, timeout=10).title == TITLE  # started, and warm
        slow = worker.extract(paper, timeout=1e-6)
        assert slow.skipped == "damaged: reading it took longer than 1e-06 s"
        assert worker.extract(paper, timeout=10).title == TITLE  # a fresh worker
    finally:
        worker.close()


def test_a_worker_that_died_is_replaced(tmp_path: Path) -> None:
    paper = one_column(tmp_path / "p.pdf", title=TITLE)
    worker = PdfWorker()
    try:
        worker.extract(paper, timeout=10)
        assert worker.process is not None
        worker.process.kill()
        worker.process.wait()
        assert worker.extract(paper, timeout=10).title == TITLE
    finally:
        worker.close()


def test_reading_in_this_process_gives_the_same(tmp_path: Path) -> None:
    paper = one_column(tmp_path / "p.pdf", title=TITLE)
    assert extract_pdf(paper, isolated=False) == extract_pdf(paper)


def test_a_folder_is_read_by_one_worker(tmp_path: Path) -> None:
    """A folder pays the worker's start once, not once per PDF (what each costs:
    scripts/pdf_reading_cost.py)."""
    for number in range(20):
        one_column(tmp_path / f"p{number:02}.pdf", title=f"{TITLE} {number}")
    extract_pdf(tmp_path / "p00.pdf")  # the shared worker started
    worker = shared_worker().process
    assert worker is not None
    papers = read_papers([tmp_path])
    assert sorted(paper.title for paper in papers) == sorted(
        f"{TITLE} {number}" for number in range(20))
    assert shared_worker().process is worker and worker.poll() is None


def test_extraction_round_trips_through_plain_data(tmp_path: Path) -> None:
    found = extract_pdf(one_column(tmp_path / "p.pdf", title=TITLE))
    assert PdfExtraction.from_dict(json.loads(json.dumps(found.to_dict()))) == found


# -- real papers --------------------------------------------------------------------------
REAL = REPO / "tests" / "data" / "pdfs" / "real"
SHARED_REAL = Path(os.environ.get("EMBEDSEARCH_REAL_PDFS",
                                  REPO.parent / "shared" / "data" / "pdfs" / "real"))
EXPECTED: dict[str, dict[str, str]] = json.loads((REAL / "expected.json").read_text("utf-8"))


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _right(found: PdfExtraction, expected: dict[str, str]) -> list[str]:
    """What `found` got wrong (nothing: right)."""
    wrong = []
    if _words(found.title) != _words(expected["title"]):
        wrong.append(f"title {found.title!r}")
    abstract = _words(found.abstract)
    end = _words(expected["abstract_end"])
    if not abstract.startswith(_words(expected["abstract_start"])):
        wrong.append(f"abstract starts {found.abstract[:80]!r}")
    elif end not in abstract[-len(end) - 40:]:
        wrong.append(f"abstract ends {found.abstract[-80:]!r}")
    return wrong


def test_real_papers() -> None:
    files = {name: folder / name for folder in (SHARED_REAL, REAL) for name in EXPECTED
             if (folder / name).is_file()}
    assert len(files) >= 10, "tests/data/pdfs/real holds ten of the sixteen"
    wrong = {name: problems for name, path in sorted(files.items())
             if (problems := _right(extract_pdf(path), EXPECTED[name]))}
    right = len(files) - len(wrong)
    assert right >= math.ceil(0.9 * len(files)), f"{right} of {len(files)} right: {wrong}"
