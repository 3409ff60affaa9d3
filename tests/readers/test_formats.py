"""The bibliographic formats: BibTeX, RIS, CSL-JSON, the arXiv snapshot, OpenAlex works.

Each on small files in the real layout its tool writes, broken ones included (the
error names the entry's line or record and the field), and entries without an
abstract (skipped and reported, or refused when none is left).
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from embedsearch import InputError, read_papers
from embedsearch.cli.indexing import INPUT_FORMAT_CHOICES
from embedsearch.readers import formats, stream_papers
from embedsearch.readers.bibtex import bibtex_record

BIB = r"""@string{iclr = "International Conference on Learning Representations"}

@inproceedings{mueller2024sparse,
  title = {{Sparse} Attention at {S}cale},
  author = {M{\"u}ller, J{\"o}rg and John Smith and {Barnes and Noble}},
  booktitle = iclr,
  year = 2024,
  abstract = {We study \emph{sparse} attention for $\alpha$-divergences.
              It costs 50\% less than na\"ive attention.},
  keywords = {attention, sparsity; transformers},
  doi = {10.1000/xyz},
  url = {https://example.org/ignored-for-the-doi}
}

@Article{doe2021,
  Title = "Protein folding with graphs",
  Author = "Doe, Jane",
  Journal = {Nature},
  Date = {2021-03-01},
  Abstract = {Graph networks predict protein structure.},
  URL = {https://example.org/doe}
}

@book{noabstract, title = {A Book}, year = 1999}
"""

RIS = """Provider: a reference manager\r
\r
TY  - JOUR\r
TI  - Sparse Attention at Scale\r
AU  - Müller, Jörg\r
AU  - Smith, John\r
PY  - 2024/05/01/\r
T2  - Journal of ML\r
AB  - We study sparse attention.\r
  It scales.\r
KW  - attention\r
KW  - sparsity; efficiency\r
DO  - 10.1000/xyz\r
ER  - \r
\r
TY  - CONF\r
ID  - conf1\r
T1  - Graph diffusion\r
A1  - Lee, Ann\r
Y1  - 2022\r
BT  - NeurIPS\r
N2  - Diffusion on graphs.\r
UR  - https://example.org/conf1\r
ER  - \r
\r
TY  - BOOK\r
TI  - No abstract\r
ER  - \r
"""

CSL = [
    {"id": "doe2021", "type": "article-journal", "title": "Protein folding with graphs",
     "abstract": "Graph networks predict protein structure.",
     "author": [{"family": "Doe", "given": "Jane"}, {"literal": "The Folding Team"},
                {"family": "Beethoven", "given": "Ludwig", "non-dropping-particle": "van"}],
     "issued": {"date-parts": [[2021, 3, 1]]}, "container-title": "Nature",
     "DOI": "https://doi.org/10.1038/abc", "keyword": "proteins, graphs; folding"},
    {"id": "lee2022", "type": "paper-conference", "title": "Graph diffusion",
     "abstract": "Diffusion on graphs.", "issued": {"raw": "2022-12"},
     "URL": "https://example.org/lee"},
    {"id": "nobody", "type": "book", "title": "A book without an abstract"},
]

ARXIV = [
    {"id": "0704.0001", "submitter": "Pavel Nadolsky",
     "authors": "C. Bal\\'azs, E. L. Berger, P. M. Nadolsky and C.-P. Yuan",
     "title": "Calculation of prompt diphoton production cross sections at Tevatron and\n"
              "  LHC energies",
     "comments": "37 pages", "journal-ref": "Phys.Rev.D76:013009,2007",
     "doi": "10.1103/PhysRevD.76.013009", "categories": "hep-ph",
     "abstract": "  A fully differential calculation in perturbative quantum chromodynamics is\n"
                 "presented for the production of massive photon pairs.\n",
     "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"},
                  {"version": "v2", "created": "Tue, 24 Jul 2007 20:10:27 GMT"}],
     "update_date": "2008-11-13",
     "authors_parsed": [["Balázs", "C.", ""], ["Berger", "E. L.", ""],
                        ["Nadolsky", "P. M.", ""], ["Yuan", "C. -P.", ""]]},
    {"id": "2101.00001", "authors": "Ann Lee and Bo Chen", "title": "Sparse graphs",
     "categories": "cs.LG stat.ML", "abstract": "We sparsify graphs.",
     "update_date": "2021-01-05"},
]

OPENALEX_WORK = {
    "id": "https://openalex.org/W2741809807", "doi": "https://doi.org/10.7717/peerj.4375",
    "display_name": "The state of OA", "title": "The state of OA", "publication_year": 2018,
    "abstract_inverted_index": {"Despite": [0], "growing": [1], "interest": [2], "in": [3],
                                "Open": [4], "Access,": [5], "little": [6], "is": [7],
                                "known.": [8]},
    "authorships": [{"author": {"display_name": "Heather Piwowar"}},
                    {"author": {"display_name": "Jason Priem"}}],
    "primary_location": {"source": {"display_name": "PeerJ"}},
    "keywords": [{"display_name": "open access"}],
    "concepts": [{"display_name": "Computer science"}],
}


def write(path: Path, text: str | bytes | Any) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif isinstance(text, str):
        path.write_text(text, encoding="utf-8", newline="")
    else:
        path.write_text(json.dumps(text), encoding="utf-8")
    return path


def error_of(path: Path, format: str | None = None, *, strict: bool = False) -> InputError:
    with pytest.raises(InputError) as caught:
        read_papers([path], format, strict=strict)
    return caught.value


#: What a warning of skipped entries without abstracts ends with.
HINT = " (--allow-title-only indexes entries on their titles)"




def test_the_command_line_offers_every_registered_format() -> None:
    assert set(INPUT_FORMAT_CHOICES) == set(formats())


# -- BibTeX ----------------------------------------------------------------------------------
def test_bibtex_fields(tmp_path: Path, warned: list[str]) -> None:
    path = write(tmp_path / "refs.bib", BIB)
    first, second = read_papers([path])
    assert first.id == "mueller2024sparse"
    assert first.title == "Sparse Attention at Scale"
    assert first.authors == ("Jörg Müller", "John Smith", "Barnes and Noble")
    assert first.abstract == ("We study sparse attention for $\\alpha$-divergences. It costs "
                              "50% less than naïve attention.")
    assert first.venue == "International Conference on Learning Representations"
    assert (first.year, first.url) == (2024, "https://doi.org/10.1000/xyz")
    assert first.keywords == ("attention", "sparsity", "transformers")
    # Field names in any case; the year of a biblatex date; url without a doi.
    assert (second.id, second.authors, second.venue, second.year, second.url) == (
        "doe2021", ("Jane Doe",), "Nature", 2021, "https://example.org/doe")
    assert warned == [f"{path}: skipped 1 entry without an abstract: noabstract (line 24)"
                      f"{HINT}"]


@pytest.mark.parametrize(("abstract", "read"), [
    # Real abstracts link their code so; pylatexenc 2 alone fails on it (IndexError).
    (r"Code at \href{https://github.com/a/b}{https://github.com/a/b}.",
     "Code at https://github.com/a/b."),
    (r"See \href{https://a.org}{our \textbf{site}} and \url{https://b.org}.",
     "See our site and https://b.org."),
    (r"A link cut short: \href{https://a.org}", "A link cut short: https://a.org"),
    (r"Nothing left: \href", "Nothing left:"),
])
def test_bibtex_links_read_as_their_text(tmp_path: Path, abstract: str, read: str) -> None:
    path = write(tmp_path / "links.bib", f"@article{{k, title={{T}}, abstract={{{abstract}}}}}\n")
    assert read_papers([path])[0].abstract == read


def test_bibtex_record_is_the_whole_mapping() -> None:
    record = bibtex_record("k", {"TITLE": "T", "abstract": "A.", "author": "B, A and C D",
                                 "journal": "J", "year": "2020", "keywords": "x;y",
                                 "Publisher": "P", "pages": "1--2", "file": "a.pdf"},
                           kind="Article")
    assert record == {"id": "k", "title": "T", "abstract": "A.", "authors": ["A B", "C D"],
                      "year": "2020", "venue": "J", "keywords": ["x", "y"], "url": "",
                      "arxiv_id": "", "entry_type": "article",
                      "bib_fields": {"pages": "1--2", "publisher": "P"}}
    # An accent opening a name after "and" survives the split (bibtexparser's drops it).
    names = bibtex_record("k", {"author": "J\\\"org M\\\"uller and \\'Emile Zola"})["authors"]
    assert names == ["Jörg Müller", "Émile Zola"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("@article{a, abstract={ok}, year={2024abc}}\n", 1,
         "field 'year': expected a year such as 2025, got '2024abc'"),
        ("@article{a, abstract={ok}, year={-5}}\n", 1, "field 'year': expected a year"),
        ("\n@article{a, abstract={ok}, year={10000000000000000000000000000000}}\n", 2,
         "field 'year': expected a four-digit year"),
    ],
)
def test_broken_bibtex_names_the_entry(tmp_path: Path, text: str, line: int,
                                       message: str) -> None:
    path = write(tmp_path / "b.bib", text)
    error = error_of(path)
    assert error.line == line and message in str(error)
    assert str(error).startswith(f"{path}:{line}: ")


def test_bibtex_duplicate_keys_and_no_abstracts(tmp_path: Path) -> None:
    path = write(tmp_path / "d.bib", "@article{a, abstract={x}}\n@article{a, abstract={y}}\n")
    assert str(error_of(path)) == f"{path}:2: duplicate id 'a' (first at {path}:1)"
    path = write(tmp_path / "n.bib", "@book{a, title={A}}\n@book{b, title={B}}\n")
    assert str(error_of(path)) == (
        f"{path}: none of its 2 entries has an abstract (a (line 1), b (line 2)); the index "
        "is of abstracts: --allow-title-only indexes them on their titles (as examples, "
        "`similar --from` uses them as they are)")
    assert "no papers found" in str(error_of(write(tmp_path / "c.bib", "% only a comment\n")))


# -- RIS -------------------------------------------------------------------------------------
def test_ris_fields(tmp_path: Path, warned: list[str]) -> None:
    path = write(tmp_path / "refs.ris", RIS)
    first, second = read_papers([path])
    assert (first.id, first.title, first.authors) == (
        "refs:1", "Sparse Attention at Scale", ("Jörg Müller", "John Smith"))
    assert first.abstract == "We study sparse attention. It scales."
    assert (first.year, first.venue, first.url) == (2024, "Journal of ML",
                                                    "https://doi.org/10.1000/xyz")
    assert first.keywords == ("attention", "sparsity", "efficiency")
    assert (second.id, second.title, second.authors, second.year, second.venue, second.url,
            second.abstract) == ("conf1", "Graph diffusion", ("Ann Lee",), 2022, "NeurIPS",
                                 "https://example.org/conf1", "Diffusion on graphs.")
    assert warned == [f"{path}: skipped 1 entry without an abstract: “No abstract” (line 26){HINT}"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("TY  - JOUR\nAB  - x\n", 1, "no 'ER  -' end before the end of the file"),
        ("TY  - JOUR\nAB  - x\nTY  - JOUR\nAB  - y\nER  -\n", 1,
         "no 'ER  -' end before the next 'TY  -' on line 3"),
        ("\nTY  - JOUR\nAB  - x\nPY  - circa 1990\nER  -\n", 2,
         "field 'year': expected a year such as 2025, got 'circa 1990'"),
    ],
)
def test_broken_ris_names_the_entry(tmp_path: Path, text: str, line: int, message: str) -> None:
    error = error_of(write(tmp_path / "b.ris", text), strict=True)
    assert error.line == line and message in str(error)


# -- CSL-JSON --------------------------------------------------------------------------------
def test_csl_json_is_recognised_in_a_json_file(tmp_path: Path, warned: list[str]) -> None:
    path = write(tmp_path / "zotero.json", CSL)
    first, second = read_papers([path])
    assert first.id == "doe2021" and first.title == "Protein folding with graphs"
    assert first.authors == ("Jane Doe", "The Folding Team", "Ludwig van Beethoven")
    assert (first.year, first.venue, first.url) == (2021, "Nature", "https://doi.org/10.1038/abc")
    assert first.keywords == ("proteins", "graphs", "folding")
    assert (second.year, second.url, second.venue) == (2022, "https://example.org/lee", "")
    assert warned == [f"{path}: skipped 1 entry without an abstract: nobody (record 3){HINT}"]
    assert read_papers([path], "csl-json") == [first, second]


def test_csl_json_errors_name_the_record_and_field(tmp_path: Path) -> None:
    bad = [CSL[0], {**CSL[1], "issued": "2022"}]
    error = error_of(write(tmp_path / "z.json", bad))
    assert (error.record, error.field) == (2, "issued")
    assert "expected a date object" in str(error)
    error = error_of(write(tmp_path / "y.json", [{**CSL[0], "author": ["Jane Doe"]}]))
    assert (error.record, error.field) == (1, "author")


# -- arXiv -----------------------------------------------------------------------------------
def test_arxiv_snapshot(tmp_path: Path) -> None:
    lines = "\n".join(json.dumps(record) for record in ARXIV) + "\n"
    sniffed = read_papers([write(tmp_path / "arxiv.jsonl", lines)])
    named = read_papers([write(tmp_path / "arxiv-metadata-oai-snapshot.json", lines)], "arxiv")
    assert sniffed == named
    first, second = sniffed
    assert first.id == "0704.0001" and first.url == "https://arxiv.org/abs/0704.0001"
    assert first.title == ("Calculation of prompt diphoton production cross sections at "
                           "Tevatron and LHC energies")
    assert first.abstract.startswith("A fully differential calculation in perturbative")
    assert first.authors == ("C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C. -P. Yuan")
    assert (first.year, first.venue, first.keywords) == (2007, "arXiv", ("hep-ph",))
    # No versions: the year of update_date; authors from the text, split on ',' and 'and'.
    assert (second.year, second.authors, second.keywords) == (
        2021, ("Ann Lee", "Bo Chen"), ("cs.LG", "stat.ML"))


def test_the_arxiv_dump_named_json_is_read_a_line_at_a_time(tmp_path: Path) -> None:
    # Kaggle names the dump .json though it is JSON Lines: read without --input-format,
    # it is recognised from its first two lines and streamed, never read whole.
    dump = tmp_path / "arxiv-metadata-oai-snapshot.json"
    with dump.open("w", encoding="utf-8") as out:
        for number in range(20_000):
            record = {**ARXIV[0], "id": f"2401.{number:05d}",
                      "abstract": f"Paper {number}. " + ARXIV[0]["abstract"] * 12}
            out.write(json.dumps(record) + "\n")
    size = dump.stat().st_size
    tracemalloc.start()
    try:
        count = 0
        for paper in stream_papers([dump]):
            count += 1
            assert paper.venue == "arXiv" and paper.year == 2007
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 20_000 and size > 30e6
    assert peak < size / 5, (peak, size)  # the ids seen (duplicates are an error), no more
    # A JSON array named .json is still read as one.
    array = write(tmp_path / "both.json", json.dumps(ARXIV))
    assert [p.id for p in read_papers([array])] == ["0704.0001", "2101.00001"]


def test_arxiv_errors_name_the_line(tmp_path: Path) -> None:
    bad = {**ARXIV[1], "versions": [{"created": 2007}]}
    text = json.dumps(ARXIV[1]) + "\n" + json.dumps(bad) + "\n"
    error = error_of(write(tmp_path / "a.jsonl", text))
    assert (error.line, error.field) == (2, "versions")


# -- OpenAlex --------------------------------------------------------------------------------
def test_openalex_api_response_and_lines(tmp_path: Path, warned: list[str]) -> None:
    no_abstract = {**OPENALEX_WORK, "id": "https://openalex.org/W2",
                   "abstract_inverted_index": None}
    response = {"meta": {"count": 2}, "results": [OPENALEX_WORK, no_abstract]}
    path = write(tmp_path / "works.json", response)
    (paper,) = read_papers([path])
    assert paper.id == "W2741809807" and paper.url == "https://doi.org/10.7717/peerj.4375"
    assert paper.abstract == "Despite growing interest in Open Access, little is known."
    assert paper.authors == ("Heather Piwowar", "Jason Priem")
    assert (paper.year, paper.venue, paper.keywords) == (2018, "PeerJ", ("open access",))
    assert warned == [f"{path}: skipped 1 entry without an abstract: W2 (record 2){HINT}"]
    lines = write(tmp_path / "works.jsonl", json.dumps(OPENALEX_WORK) + "\n")
    assert read_papers([lines]) == [paper] == read_papers([lines], "openalex")
    bare = {key: value for key, value in OPENALEX_WORK.items() if key != "keywords"}
    concepts = read_papers([write(tmp_path / "c.jsonl", json.dumps(bare) + "\n")])
    assert concepts[0].keywords == ("Computer science",)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"abstract_inverted_index": {"word": ["one"]}}, "abstract_inverted_index"),
        ({"abstract_inverted_index": ["word"]}, "abstract_inverted_index"),
        ({"authorships": [{"author": {"display_name": 7}}]}, "authorships"),
        ({"publication_year": "2018abc"}, "year"),
    ],
)
def test_openalex_errors_name_the_field(tmp_path: Path, change: dict[str, object],
                                        field: str) -> None:
    text = json.dumps(OPENALEX_WORK) + "\n" + json.dumps({**OPENALEX_WORK, **change}) + "\n"
    error = error_of(write(tmp_path / "w.jsonl", text))
    assert (error.line, error.field) == (2, field)


# -- through the command line ----------------------------------------------------------------
def test_build_an_index_from_a_bib_file_and_search_it(
        cli: Callable[..., Any], tmp_path: Path) -> None:
    bibfile = write(tmp_path / "library.bib", BIB)
    out = tmp_path / "index"
    # torch, the reference backend, loads in seconds; auto would first time every backend.
    built = cli("build", bibfile, "--out", out, "--backend", "torch")
    assert built.code == 0, built.err
    assert "skipped 1 entry without an abstract: noabstract (line 24)" in built.err
    hits = cli("search", "predicting the structure of proteins", "--index", out, "-k", "1",
               "--json").json_lines()
    assert [hit["id"] for hit in hits] == ["doe2021"]
    broken = cli("build", write(tmp_path / "broken.bib", "@article{x,\n title={a\n"),
                 "--out", tmp_path / "other")
    assert broken.code == 1
    assert (f"{tmp_path / 'broken.bib'}:1: no papers could be read: malformed BibTeX entry"
            in broken.err)
