"""A PDF read in full: its body as passages with their pages, page labels and sections.

A paper typeset in two columns (tests/readers/typeset.py) with everything a journal
page prints besides its text (running heads, page numbers, footnotes and their marks,
hyphenated line ends, captions, a reference list, an appendix) is read back: what each
passage says, on which page and under which heading, and what is left out. A body
that cannot be read keeps the title and abstract, with the reason. The real PDFs of
tests/data/pdfs/real check that sentences read off their pages are found on them.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch import SearchEngine, read_papers
from embedsearch.papers import Block, Passage
from embedsearch.readers import read_bibliography
from embedsearch.readers.pdf import PdfExtraction, extract_pdf
from embedsearch.readers.pdf.body import read_body
from embedsearch.readers.pdf.layout import open_document
from embedsearch.readers.pdf.worker import PdfWorker
from tests.conftest import REPO, CliResult
from tests.readers.typeset import Typeset

Cli = Callable[..., CliResult]

TITLE = "Sparse Attention Heads Learn Syntax Without Supervision"
AUTHORS = "Ada Lovelace and Alan Turing"
ABSTRACT = ("We study whether sparse attention heads in transformer language models learn "
            "syntactic relations without any supervision. Probing twelve models on four "
            "treebanks, we find that a small set of heads tracks dependency arcs with high "
            "precision. These results suggest that syntax emerges in a few specialised heads.")
HEAD = "Lovelace and Turing: Sparse Attention Heads"
REFERENCES = ["Clark K, Khandelwal U (2019). What does BERT look at? An analysis of BERT's "
              "attention. In Proceedings of BlackboxNLP.",
              "Hewitt J, Manning C (2019). A structural probe for finding syntax in word "
              "representations. In Proceedings of NAACL."]
# Sentences the tests look for, each once in the paper.
MARKED = "We ask whether single attention heads track dependency arcs."
HYPHENATED = "The prediction of each arc comes from one head alone."
ACROSS_COLUMNS = "Every head was scored against the gold arcs of four treebanks in turn."
ACROSS_FIGURE = "The heads were ranked by their agreement with the gold arcs of each treebank."
ACROSS_PAGES = "The heads that track arcs are found in the middle layers of every model."
AFTER_PAGES = "In the fifth run 1, layer 1 agreed with the treebank on 41 of every hundred arcs"
FOOTNOTE = "The probes are linear classifiers trained on frozen activations of each head."
CAPTION = "Figure 1: Heads that track dependency arcs, by layer and model."
TABLE = "Table 2. Agreement of the best head with gold arcs, per model."
APPENDIX = "The proof of the agreement bound follows from the triangle inequality."
ADDRESS = "Ada Lovelace, Department of Computing, University of Cambridge, United Kingdom."


def filler(topic: str, count: int) -> str:
    """`count` sentences about `topic`, each its own (numbered) statement."""
    return " ".join(f"In the {topic} run {number}, layer {number % 12} agreed with the "
                    f"treebank on {40 + number} of every hundred arcs it was shown."
                    for number in range(1, count + 1))


def paper(path: Path, *, labels: bool = False, after: str = "Appendix A Proofs") -> Typeset:
    """Three pages: the front matter and two columns on page 1; a paragraph that goes
    on from column to column and from page to page; a figure that interrupts a
    sentence; a table; the references; a section headed `after` after them; the
    authors' addresses."""
    sheet = Typeset(path, running_head=HEAD, first_page=101, labels=labels)
    sheet.front(TITLE, AUTHORS, ABSTRACT)
    sheet.heading("1 Introduction")
    sheet.paragraph("Language models are trained to predict words, yet they appear to "
                    "represent grammar. We ask whether single attention heads track "
                    "dependency arcs.^1 Our probes read the heads of twelve models without "
                    "any training signal from treebanks. The predic-|tion of each arc comes "
                    "from one head alone. " + filler("first", 6))
    sheet.footnote("^1 " + FOOTNOTE)
    sheet.paragraph(filler("second", 5) + " Every head was scored against the gold ¶arcs "
                    "of four treebanks in turn. " + filler("third", 3))
    sheet.heading("2 Method")
    sheet.paragraph(filler("fourth", 9) + " The heads that track arcs ¶are found in the "
                    "middle layers of every model. " + filler("fifth", 4))
    sheet.paragraph(filler("sixth", 14) + " The heads were ranked by their ¶agreement with "
                    "the gold arcs of each treebank. " + filler("seventh", 12),
                    figure=CAPTION)
    sheet.heading("3 Results")
    sheet.paragraph(filler("eighth", 10))
    sheet.caption(TABLE, height=40)
    sheet.paragraph(filler("ninth", 2))
    sheet.references(REFERENCES)
    sheet.heading(after)
    sheet.paragraph(APPENDIX + " " + filler("tenth", 2))
    sheet.heading("Affiliation:")  # as JSS prints the authors' addresses last
    sheet.paragraph(ADDRESS, indent=False)
    sheet.save()
    return sheet


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def holding(passages: tuple[Passage, ...], sentence: str) -> list[Passage]:
    return [passage for passage in passages if words(sentence) in words(passage.text)]


@pytest.fixture(scope="module")
def typeset(tmp_path_factory: pytest.TempPathFactory) -> Typeset:
    return paper(tmp_path_factory.mktemp("body") / "sparse-heads.pdf", labels=True)


@pytest.fixture(scope="module")
def found(typeset: Typeset) -> PdfExtraction:
    return extract_pdf(typeset.path)


def test_the_layout_is_as_the_tests_assume(typeset: Typeset) -> None:
    assert typeset.where(ACROSS_COLUMNS[:30]) == (1, 0)
    assert typeset.where("arcs of four treebanks") == (1, 1)
    assert typeset.where(ACROSS_PAGES[:30]) == (1, 1) and typeset.page_of("are found in") == 2
    assert typeset.page_of(AFTER_PAGES) == 2
    assert typeset.where(ACROSS_FIGURE[:30]) == (2, 0)
    assert typeset.where("agreement with the gold") == (2, 1)
    assert typeset.page_of(TABLE[:20]) == typeset.page_of(APPENDIX[:30]) == 3


def test_the_first_pages_fields_are_as_without_the_body(found: PdfExtraction,
                                                        typeset: Typeset) -> None:
    first = extract_pdf(typeset.path, full_text=False)
    assert (found.title, found.abstract) == (TITLE, ABSTRACT)
    assert first == PdfExtraction(**{**found.__dict__, "passages": (), "body_pages": 0})
    assert found.body_pages == found.pages == 3 and found.body_skipped == ""


def test_sections_in_order_and_captions_apart(found: PdfExtraction) -> None:
    sections = list(dict.fromkeys(passage.section for passage in found.passages))
    assert sections == ["1 Introduction", "2 Method", "Figure 1", "3 Results", "Table 2",
                        "Appendix A Proofs"]
    [figure] = [passage for passage in found.passages if passage.section == "Figure 1"]
    assert figure.text == CAPTION and figure.page == 2
    [table] = [passage for passage in found.passages if passage.section == "Table 2"]
    assert table.text == TABLE and table.page == 3


@pytest.mark.parametrize("sentence, page", [
    (MARKED, 1), (HYPHENATED, 1), (ACROSS_COLUMNS, 1), (ACROSS_PAGES, 1), (AFTER_PAGES, 2),
    (ACROSS_FIGURE, 2), (APPENDIX, 3)])
def test_sentences_are_whole_and_on_the_page_they_start_on(
        found: PdfExtraction, typeset: Typeset, sentence: str, page: int) -> None:
    passages = holding(found.passages, sentence)
    assert passages, sentence
    # A sentence is placed on its page by the blocks the reader gives (a passage is on
    # the page of its first sentence, which may be on the page before).
    [block] = [block for block in blocks_of(typeset.path) if sentence in block.text]
    assert (block.page, block.page_label) == (page, str(100 + page))


def blocks_of(path: Path) -> list[Block]:
    document = open_document(path, 10**9)
    try:
        return read_body(document, title=TITLE, abstract=ABSTRACT)[0]
    finally:
        document.close()


def test_marks_hyphens_heads_and_page_numbers_are_left_out(found: PdfExtraction,
                                                           typeset: Typeset) -> None:
    text = " ".join(passage.text for passage in found.passages)
    assert MARKED + " Our probes" in text  # the footnote's mark "1" is gone
    assert "predic-" not in text and "predic tion" not in text
    assert HEAD not in text and TITLE not in text
    assert not re.search(r"\b10[123]\b", text)  # the printed page numbers
    # The footnote is a block of its own, after the paragraph that runs on over its
    # page's end (under that paragraph's heading: which sentence it notes is not known).
    assert holding(found.passages, FOOTNOTE)
    [note] = [block for block in blocks_of(typeset.path) if FOOTNOTE in block.text]
    assert note == Block(FOOTNOTE, 1, "101", "2 Method")


def test_front_matter_and_references_are_not_passages(found: PdfExtraction) -> None:
    text = words(" ".join(passage.text for passage in found.passages))
    assert words(ABSTRACT[:60]) not in text and words(AUTHORS) not in text
    for entry in REFERENCES:
        assert words(entry[:40]) not in text
    assert words(ADDRESS) not in text
    assert "references" not in {passage.section.casefold() for passage in found.passages}


def test_a_numbered_section_after_the_references_is_read(tmp_path: Path) -> None:
    """As a thesis's next chapter after the last one's references is."""
    passages = extract_pdf(paper(tmp_path / "p.pdf", after="4 Syntax in Larger Models").path
                           ).passages
    [after] = holding(passages, APPENDIX)
    assert after.section == "4 Syntax in Larger Models"
    assert not holding(passages, REFERENCES[0][:40])


def test_page_labels_are_empty_when_the_pdf_names_none(tmp_path: Path) -> None:
    passages = extract_pdf(paper(tmp_path / "p.pdf").path).passages
    assert passages and {passage.page_label for passage in passages} == {""}
    assert {passage.page for passage in passages} == {1, 2, 3}


def test_the_paper_record_has_the_passages_and_the_file(typeset: Typeset,
                                                       found: PdfExtraction) -> None:
    [paper_read] = read_papers([typeset.path])
    assert paper_read.passages == found.passages
    assert paper_read.file == str(typeset.path.resolve())
    [first_pages] = read_papers([typeset.path], full_text=False)
    assert (first_pages.passages, first_pages.file) == ((), "")
    assert first_pages.abstract == paper_read.abstract == ABSTRACT


def test_the_report_says_what_the_body_gave(typeset: Typeset) -> None:
    [note] = read_bibliography([typeset.path]).report()
    assert str(note["reason"]).endswith(
        f"body: {len(extract_pdf(typeset.path).passages)} passages from 3 pages")
    extracted = note["extracted"]
    assert isinstance(extracted, dict) and extracted["body_pages"] == 3
    [first] = read_bibliography([typeset.path], full_text=False).report()
    assert "body" not in str(first["reason"]) and "passages" not in first["extracted"]


def test_the_extraction_round_trips_with_its_passages(found: PdfExtraction) -> None:
    assert PdfExtraction.from_dict(json.loads(json.dumps(found.to_dict()))) == found


def test_build_reads_in_full_and_abstract_only_does_not(cli: Cli, tmp_path: Path,
                                                         typeset: Typeset) -> None:
    """`build` indexes a folder's PDFs in full: a body sentence finds its paper with the
    page it is on; `add --abstract-only` adds one as a record of its first pages."""
    folder, later = tmp_path / "papers", tmp_path / "later"
    folder.mkdir(), later.mkdir()
    shutil.copyfile(typeset.path, folder / "heads.pdf")
    shutil.copyfile(typeset.path, later / "heads-again.pdf")
    index = tmp_path / "index"
    assert cli("build", folder, "--out", index, "--quiet").code == 0
    assert cli("add", later, "--index", index, "--abstract-only", "--quiet").code == 0
    engine = SearchEngine.open(index)
    assert engine.passages("heads") == list(extract_pdf(typeset.path).passages)
    assert engine.file_of("heads") == str((folder / "heads.pdf").resolve())
    assert engine.passages("heads-again") == [] and engine.file_of("heads-again") == ""
    [hit] = engine.search(ACROSS_FIGURE, k=1)
    assert hit.id == "heads" and hit.passage is not None and hit.passage.page == 2


# -- a body that cannot be read -----------------------------------------------------------
def broken_last_page(path: Path) -> Path:
    """The paper with its last page's object missing: PDFium counts the page and fails
    to load it (the reference is rewritten in place, so the offsets stay right)."""
    data = paper(path).path.read_bytes()
    kids = re.search(rb"/Kids \[ ([\d R]+) \]", data)
    assert kids is not None
    last = kids.group(1).split(b" 0 R")[-2].strip()
    broken = kids.group(0).replace(last + b" 0 R ]", b"9" * len(last) + b" 0 R ]")
    path.write_bytes(data.replace(kids.group(0), broken))
    return path


def test_a_page_that_does_not_load_keeps_the_title_and_abstract(tmp_path: Path) -> None:
    found = extract_pdf(broken_last_page(tmp_path / "broken.pdf"))
    assert found.ok and (found.title, found.abstract) == (TITLE, ABSTRACT)
    assert found.body_skipped.startswith("damaged: a page of its body could not be read")
    assert found.passages == ()
    [note] = read_bibliography([found.path]).report()
    assert "body not read: damaged: a page of its body" in str(note["reason"])


def test_a_body_over_its_time_limit_keeps_the_first_pages(typeset: Typeset) -> None:
    worker = PdfWorker()
    try:
        slow = worker.extract(typeset.path, 10, full_text=True, body_timeout=1e-6)
        assert (slow.title, slow.abstract, slow.passages) == (TITLE, ABSTRACT, ())
        assert slow.body_skipped == ("its body was not read: reading it took longer than "
                                     "1e-06 s")
        again = worker.extract(typeset.path, 10, full_text=True)  # a fresh worker
        assert again.passages and not again.body_skipped
        assert worker.extract(typeset.path, 10).passages == ()  # first pages only
    finally:
        worker.close()


# -- real papers --------------------------------------------------------------------------
REAL = REPO / "tests" / "data" / "pdfs" / "real"
# Sentences read off the pages' text (pypdfium2's `get_text_range`), each well into its
# page, so that every passage that holds it starts on that page.
ON_PAGES = [
    ("sandwich-cl.pdf", 6, "This is, however, only possible in situations where the "
     "parameter of the response distribution depends on a single linear predictor "
     "(possibly through a link function)."),
    ("sandwich-cl.pdf", 20, "Therefore, we try to fill this gap by starting out with "
     "simulations of (generalized) linear models similar to the ones mentioned above"),
    ("rcpp-introduction.pdf", 3, "The resulting code is shorter, easier to read, "
     "comprehend and maintain."),
    ("strucchange-intro.pdf", 5, "This is shown in detail in Chu, Hornik, and Kuan (1995a)."),
    ("zoo.pdf", 13, "These perform the operations only for the intersection of the indexes "
     "of the objects."),
    ("mnras-guide.pdf", 3, "Bulleted lists using the itemize environment should not be "
     "used in MNRAS; it is retained for backwards compatibility only."),
    ("ieeepes-doc.pdf", 2, "Using a reserved filename for the image file in the biography "
     "environment suppresses the author image for this instance only."),
]


@pytest.fixture(scope="module")
def real_passages() -> dict[str, tuple[Passage, ...]]:
    return {name: extract_pdf(REAL / name).passages for name in {case[0] for case in ON_PAGES}}


@pytest.mark.parametrize("name, page, sentence", ON_PAGES,
                         ids=[f"{case[0]}-p{case[1]}" for case in ON_PAGES])
def test_real_sentences_are_found_on_their_pages(
        real_passages: dict[str, tuple[Passage, ...]], name: str, page: int,
        sentence: str) -> None:
    passages = holding(real_passages[name], sentence)
    assert passages and {passage.page for passage in passages} == {page}, passages


def test_a_paragraph_after_a_code_listing_on_the_next_page_starts_there() -> None:
    """strucchange's page 12 ends in the output of R, no full stop after it; page 13
    goes on with more of it, then a sentence: it is on page 13, not read on from 12."""
    path = REAL / "strucchange-intro.pdf"
    found = extract_pdf(path, full_text=False)
    document = open_document(path, 10**9)
    try:
        blocks, _ = read_body(document, title=found.title, abstract=found.abstract)
    finally:
        document.close()
    sentence = "The software informs us that a structural break has been detected"
    assert [block.page for block in blocks if sentence in block.text] == [13]
