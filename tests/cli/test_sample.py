"""`embedsearch sample`: the bundled sample as the reader's own file, with the default
index's ids, in each format, read back by the readers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch.bundled import sample_abstracts, sample_papers
from embedsearch.readers import read_papers
from tests.conftest import CliResult


def test_every_export_suffix_is_offered() -> None:
    from embedsearch.cli.sample import SUFFIXES
    from embedsearch.exporting import EXPORT_FORMATS

    assert sorted(SUFFIXES) == sorted(f.suffix for f in EXPORT_FORMATS.values())


@pytest.mark.parametrize("name", ["papers.jsonl", "papers.csv", "papers.bib", "papers.ris",
                                  "papers.json"])
def test_the_sample_reads_back_with_its_ids(name: str, tmp_path: Path,
                                            cli: Callable[..., CliResult]) -> None:
    done = cli("sample", tmp_path / name)
    assert done.code == 0 and "Wrote 38 papers" in done.err
    papers = read_papers([tmp_path / name])
    assert [paper.id for paper in papers] == [f"iclr2025:{n}" for n in range(1, 39)]
    assert [paper.abstract for paper in papers] == sample_abstracts()
    assert all(paper.venue == "ICLR" and paper.year == 2025 for paper in papers)
    # Titles cut from the abstracts stay so: every format carries title_derived (BibTeX,
    # RIS and CSL-JSON as a title in brackets, which the readers take back as derived).
    assert [(paper.title, paper.title_derived) for paper in papers] == [
        (paper.title, True) for paper in sample_papers()]


def test_a_derived_title_is_no_title_in_an_export_of_an_index(
        tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    assert cli("sample", tmp_path / "papers.jsonl", "--papers", "1-3").code == 0
    titled = tmp_path / "titled.csv"
    titled.write_text("id,title,title_derived,abstract\n"
                      "t1,Low-Rank Visual Prompting,false,We prompt with low-rank matrices.\n"
                      "t2,A title said to be derived,yes,Its abstract.\n")
    built = cli("build", tmp_path / "papers.jsonl", titled, "--out", tmp_path / "index")
    assert built.code == 0, built.err
    hits = cli("search", "low-rank visual prompting", "--index", tmp_path / "index", "-k",
               "5", "--format", "bibtex")
    assert hits.code == 0, hits.err
    text = hits.out
    (tmp_path / "hits.bib").write_text(text, encoding="utf-8")
    # Each derived title in brackets, as a catalogue writes a title it supplied (left
    # out, biber refused the entry); a real one as it is.
    assert "title = {Low-Rank Visual Prompting}" in text
    assert "title = {[A title said to be derived]}" in text
    assert f"title = {{[{sample_papers()[0].title}]}}" in text
    again = {paper.id: paper for paper in read_papers([tmp_path / "hits.bib"])}
    assert again["t1"].title == "Low-Rank Visual Prompting" and not again["t1"].title_derived
    assert again["iclr2025:1"].title == sample_papers()[0].title
    assert again["iclr2025:1"].title_derived and again["t2"].title_derived
    assert again["t2"].title == "A title said to be derived"
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("id,title,title_derived,abstract\nw1,T,perhaps,An abstract.\n")
    refused = cli("build", wrong, "--out", tmp_path / "other")
    assert refused.code == 1
    assert ("wrong.csv:2: field 'title_derived': expected true or false, got 'perhaps'"
            in refused.err)


def test_ranges_and_refusals(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    assert cli("sample", tmp_path / "new.jsonl", "--papers", "34-38").code == 0
    assert [p.id for p in read_papers([tmp_path / "new.jsonl"])] == [
        f"iclr2025:{n}" for n in range(34, 39)]
    again = cli("sample", tmp_path / "new.jsonl")
    assert again.code == 1 and "exists already" in again.err
    for bad, said in [("0-3", "numbered 1 to 38"), ("5-2", "numbered 1 to 38"),
                      ("a-b", "write a range")]:
        refused = cli("sample", tmp_path / "x.jsonl", "--papers", bad)
        assert refused.code == 1 and said in refused.err, bad
    wrong = cli("sample", tmp_path / "x.txt")
    assert wrong.code == 1 and "name the file .jsonl, .csv, .bib, .ris or .json" in wrong.err
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "x.txt").exists()


def test_the_sample_papers_are_titled_by_their_openings() -> None:
    # (The default index is built of them: the tutorial's test shows iclr2025:1 there.)
    papers = sample_papers()
    assert len(papers) == 38 and len({paper.id for paper in papers}) == 38
    assert all(paper.title_derived and paper.title for paper in papers)
