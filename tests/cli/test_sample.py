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
