"""BibTeX export keeps what a bibliography said: the entry type, every standard field
read (publisher, editor, pages, ...), Unicode in every field or (--latex) LaTeX escapes
in every field; the real-world-like files of tests/data/bibliographies read, export and
read again as the same papers, field for field."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch.cli import main
from embedsearch.exporting import to_bibtex, to_csv, to_jsonl
from embedsearch.papers import Paper
from embedsearch.readers import read_papers
from embedsearch.storage.milvus.schema import paper_of
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
BIBLIOGRAPHIES = Path(__file__).parent.parent / "data" / "bibliographies"
FIXTURES = sorted(BIBLIOGRAPHIES.glob("*.bib")) + sorted(BIBLIOGRAPHIES.glob("*.ris"))
# A LaTeX accent or letter macro, as the export writes them with --latex ({\"u}, {\L}).
ESCAPE = re.compile(r"\{\\(?:['\"`^~=.]|[cvuHkrdb]\{|ss\}|[oOlLij]\}|ae\}|oe\}|text)")


def read(path: Path) -> list[Paper]:
    return read_papers([path], title_only=True)


def round_trip(papers: list[Paper], tmp_path: Path, *, latex: bool) -> list[Paper]:
    path = tmp_path / f"export-{'latex' if latex else 'unicode'}.bib"
    path.write_text(to_bibtex(papers, latex=latex), encoding="utf-8")
    return read(path)


def test_the_fixtures_hold_what_the_round_trip_must_keep() -> None:
    papers = [paper for path in FIXTURES for paper in read(path)]
    kinds = {paper.entry_type for paper in papers}
    assert {"article", "book", "incollection", "inbook", "inproceedings", "phdthesis",
            "mastersthesis", "techreport", "misc", "unpublished"} <= kinds
    fields = {name for paper in papers for name, _ in paper.bib_fields}
    assert {"editor", "publisher", "volume", "number", "pages", "edition", "address",
            "isbn", "issn", "school", "institution", "series", "note", "month",
            "booktitle", "chapter", "organization", "howpublished", "type"} <= fields
    assert any(not " ".join(paper.authors).isascii() for paper in papers)  # accents to keep
    # A misc entry's howpublished is its venue ("arXiv preprint"), unless it is a link.
    venues = {paper.id: paper.venue for paper in papers}
    assert venues["kingma2014adam"] == "arXiv preprint" and venues["wolf2020transformers"] == ""


@pytest.mark.parametrize("latex", [False, True], ids=["unicode", "latex"])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_read_export_read_keeps_every_field(path: Path, latex: bool, tmp_path: Path) -> None:
    papers = read(path)
    back = round_trip(papers, tmp_path, latex=latex)
    assert [paper.id for paper in back] == [paper.id for paper in papers]
    for original, again in zip(papers, back):
        for field in dataclasses.fields(Paper):
            assert getattr(again, field.name) == getattr(original, field.name), \
                (original.id, field.name)


def test_a_book_stays_a_book_with_its_publisher() -> None:
    book = next(p for p in read(BIBLIOGRAPHIES / "zotero-better-bibtex.bib")
                if p.id == "goodfellow2016deep")
    assert book.entry_type == "book"
    text = to_bibtex([book])
    assert text.startswith("@book{goodfellow2016deep,")
    for line in ("publisher = {MIT Press}", "address = {Cambridge, MA}", "edition = {1}",
                 "isbn = {978-0-262-03561-3}", "series = {Adaptive Computation and Machine "
                 "Learning}"):
        assert line in text
    # A paper whose source said nothing of its kind: guessed from its venue as before,
    # but a misc without authors, which biblatex requires of a conference paper.
    guessed = Paper("p", "An abstract.", venue="ICLR", authors=["Ada Lovelace"])
    assert to_bibtex([guessed]).startswith("@inproceedings")
    assert to_bibtex([Paper("p", "An abstract.", venue="ICLR")]).startswith("@misc")
    assert to_bibtex([Paper("p", "An abstract.")]).startswith("@misc")


def test_unicode_throughout_by_default_and_escapes_throughout_with_latex() -> None:
    papers = [paper for path in FIXTURES for paper in read(path)]
    unicode, latex = to_bibtex(papers), to_bibtex(papers, latex=True)
    # Authors, editors, titles, schools alike: one way in each mode.
    for text in ("Jörg Müller", "Grégoire Montavon and", "Łukasz Kaiser", "Ayşe Çelik",
                 "ETH Zürich", "für die Übersetzung"):
        assert text in unicode
    assert not ESCAPE.search(unicode)
    assert "\\&" in unicode and "50\\%" in unicode  # LaTeX's specials escaped in both
    for text in ('J{\\"o}rg M{\\"u}ller', "Gr{\\'e}goire Montavon and", "{\\L}ukasz Kaiser",
                 "Ay{\\c{s}}e {\\c{C}}elik", 'ETH Z{\\"u}rich', 'f{\\"u}r die {\\"U}bersetzung',
                 "{\\textemdash}"):
        assert text in latex
    assert latex.isascii()  # every character of the fixtures has a LaTeX spelling
    assert "month = mar," in unicode and "pages = {1--48}" in unicode


def test_a_character_without_a_faithful_escape_stays_unicode(tmp_path: Path) -> None:
    paper = Paper("p", "ﬁne ligatures, −1, 中文 and naïve $\\alpha$ math.",
                  title="Naïve ﬁt", authors=("Zoë van der Berg", "{Barnes and Noble}"[1:-1]))
    text = to_bibtex([paper], latex=True)
    assert "ﬁne" in text and "−1" in text and "中文" in text and "na{\\\"\\i}ve" in text
    assert "{Barnes and Noble}" in text  # one company, not two people
    (back,) = round_trip([paper], tmp_path, latex=True)
    assert back == dataclasses.replace(paper, entry_type="misc")


def test_other_outputs_carry_the_entry_type_and_fields(tmp_path: Path) -> None:
    # Our own layout requires an abstract: the entries that have one.
    papers = [p for p in read(BIBLIOGRAPHIES / "zotero-better-bibtex.bib") if p.abstract]
    path = tmp_path / "papers.jsonl"
    path.write_text(to_jsonl(papers), encoding="utf-8")
    assert read(path) == papers  # our own layout reads them back
    assert [paper_of(paper.to_dict()) for paper in papers] == papers  # a Milvus record
    old = {key: value for key, value in papers[0].to_dict().items()
           if key not in ("entry_type", "bib_fields")}
    assert (paper_of(old).entry_type, paper_of(old).bib_fields) == ("", ())
    assert "publisher: Microtome Publishing; month: mar" in to_csv(papers[:1])


def test_csl_types_and_fields(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text('[{"id": "c", "type": "chapter", "title": "A chapter", "container-title":'
                    ' "A Book", "publisher": "Springer", "page": "1-10", "volume": 3,'
                    ' "editor": [{"family": "Doe", "given": "Jane"}]},'
                    ' {"id": "t", "type": "thesis", "title": "A thesis", "publisher": "MIT",'
                    ' "issued": {"date-parts": [[2019]]}}]', encoding="utf-8")
    chapter, thesis = read(path)
    assert chapter.entry_type == "incollection" and dict(chapter.bib_fields) == {
        "editor": "Jane Doe", "volume": "3", "pages": "1--10", "publisher": "Springer"}
    assert thesis.entry_type == "phdthesis" and dict(thesis.bib_fields) == {"school": "MIT"}
    assert round_trip([chapter, thesis], tmp_path, latex=False) == [chapter, thesis]


def test_latex_on_the_command_line(cli: Cli, seed_index: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    query = ["search", "visual prompting", "--index", seed_index, "-k", "3"]
    plain, escaped = cli(*query, "--format", "bibtex"), cli(*query, "--format", "bibtex",
                                                           "--latex")
    assert plain.code == escaped.code == 0 and escaped.out.isascii()
    entries = [re.findall(r"^@(\w+)\{([^,]+),", out, re.M) for out in (plain.out, escaped.out)]
    assert entries[0] == entries[1] and len(entries[0]) == 3
    refused = cli(*query, "--latex")
    assert refused.code != 0 and "add --format bibtex" in refused.err
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    assert "--latex" in (said := capsys.readouterr().out) and "LaTeX escapes" in said
