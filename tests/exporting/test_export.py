"""Taking results away: BibTeX that the BibTeX reader reads back as the same papers,
CSV with the JSON hit's fields, and `--format` on search and similar."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from embedsearch.exporting import citation_key, to_bibtex, to_csv, to_jsonl
from embedsearch.papers import Paper
from embedsearch.readers import read_papers
from embedsearch.search.results import HIT_COLUMNS, hit_record
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
# Everything BibTeX and LaTeX treat specially, in every field that is written.
AWKWARD = Paper(
    id="awkward:2024/01", title="LoRA & GPT-4: {50%} of $O(n^2)$ for naïve “graphs” -- fast",
    abstract="We cut costs by 50% & more: {braces}, $\\alpha$-divergence, a_b #3 ~x, O(n^2), "
             "a < b > c, \\emph-like text, ``quoted'' \"straight\" --- and ﬁne ligatures, "
             "−1, 中文 and a lone { brace.",
    authors=("José Núñez", "Bob O'Neil", "Zoë van der Berg"),
    keywords=("graphs", "message passing"), venue="Journal of Machine Learning Research",
    year=2021, url="https://example.org/a_b?c=1&d=%20e")


def same_paper(original: Paper, read: Paper) -> None:
    assert read.id == original.id
    for name in ("title", "abstract"):
        assert " ".join(getattr(read, name).split()) == " ".join(getattr(original, name).split())
    assert (read.authors, read.keywords, read.venue, read.year, read.url) == (
        original.authors, original.keywords, original.venue, original.year, original.url)


def test_bibtex_reads_back_as_the_same_papers(seed_files: list[Path], tmp_path: Path) -> None:
    papers = [*read_papers(seed_files), AWKWARD]
    path = tmp_path / "export.bib"
    path.write_text(to_bibtex(papers), encoding="utf-8")
    back = read_papers([path])
    assert len(back) == len(papers)
    for original, read in zip(papers, back):
        same_paper(original, read)


def test_entries_and_keys(tmp_path: Path) -> None:
    text = to_bibtex([AWKWARD, Paper("conf:1", "An abstract.", venue="ICLR", year=2025,
                                     authors=["Ada Lovelace"]),
                      Paper("plain id", "Another abstract."), AWKWARD])
    assert text.count("@") == 3  # each paper once
    assert "@article{awkward:2024/01," in text and "journal = {Journal of Machine" in text
    assert "@inproceedings{conf:1," in text and "booktitle = {ICLR}" in text
    assert "@misc{" + citation_key("plain id") + "," in text
    assert "{LoRA}" in text and "{GPT-4}" in text  # kept as written by lower-casing styles
    # Unicode in every field, authors too; --latex spells accents in every field.
    assert "José Núñez" in text and "\\&" in text and "\\%" in text
    escaped = to_bibtex([AWKWARD], latex=True)
    assert "Jos{\\'e} N{\\'u}{\\~n}ez" in escaped and 'na{\\"\\i}ve' in escaped
    # A key is the id when the id is a valid key; otherwise safe, stable and distinct.
    assert citation_key("nips2018:11607") == "nips2018:11607"
    assert citation_key("plain id") == citation_key("plain id") != citation_key("plain_id")
    assert " " not in citation_key("plain id") and citation_key("plain id").startswith("plain_id_")


def test_csv_has_the_json_fields(seed_engine: SearchEngine) -> None:
    hits = seed_engine.search("visual prompting", 3)
    rows = list(csv.DictReader(io.StringIO(to_csv(hits))))
    assert list(rows[0]) == list(HIT_COLUMNS) and len(rows) == 3
    for row, hit in zip(rows, hits):
        record = hit_record(hit)
        assert row["id"] == hit.paper.id and float(row["score"]) == record["score"]
        assert row["abstract"] == hit.paper.abstract and row["year"] == str(hit.paper.year)
        assert row["evidence_terms"] == "; ".join(hit.evidence_terms)
        assert row["title_derived"] == "true"
    papers = list(csv.DictReader(io.StringIO(to_csv([AWKWARD]))))
    assert papers[0]["authors"] == "José Núñez; Bob O'Neil; Zoë van der Berg"
    assert "rank" not in papers[0]
    assert to_jsonl(hits).splitlines()[0] == json.dumps(hit_record(hits[0]), ensure_ascii=False)


def test_format_on_the_command_line(cli: Cli, seed_index: Path, tmp_path: Path) -> None:
    query = ["search", "visual prompting", "--index", seed_index, "-k", "4"]
    as_json = cli(*query, "--json")
    assert cli(*query, "--format", "jsonl").out == as_json.out
    expected = [hit["id"] for hit in as_json.json_lines()]
    rows = list(csv.DictReader(io.StringIO(cli(*query, "--format", "csv").out)))
    assert [row["id"] for row in rows] == expected
    bib = tmp_path / "hits.bib"
    bib.write_text(cli(*query, "--format", "bibtex").out, encoding="utf-8")
    assert [paper.id for paper in read_papers([bib])] == expected
    queries = tmp_path / "queries.txt"
    queries.write_text("visual prompting\n\nspiking neural networks\n")
    batch = cli("search", "--queries", queries, "--index", seed_index, "-k", "2",
                "--format", "csv").out
    assert batch.count("rank,score,id") == 1  # one header
    rows = list(csv.DictReader(io.StringIO(batch)))
    assert [row["query_index"] for row in rows] == ["0", "0", "2", "2"]
    similar = cli("similar", expected[0], "--index", seed_index, "-k", "3", "--format", "bibtex")
    # The sample gives no authors, which biblatex requires of an @inproceedings.
    assert similar.code == 0 and similar.out.count("@misc{") == 3
    assert similar.out.count("howpublished = {ICLR}") == 3
    with pytest.raises(SystemExit) as exit_:
        cli(*query, "--json", "--format", "csv")
    assert exit_.value.code == 2
