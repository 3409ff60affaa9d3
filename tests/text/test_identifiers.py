"""DOIs and arXiv ids: read from every format that carries them, kept on the paper and
in the store, used to match a bibliography to an index before titles, written back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embedsearch import InputError, SearchEngine, read_papers
from embedsearch.exporting import to_bibtex
from embedsearch.papers import Paper
from embedsearch.text.identifiers import normalise_arxiv_id, normalise_doi


@pytest.mark.parametrize(("text", "doi"), [
    ("10.1000/XYZ", "10.1000/xyz"), ("https://doi.org/10.18653/v1/2020.acl-main.1",
                                     "10.18653/v1/2020.acl-main.1"),
    ("doi:10.1145/3292500.3330701", "10.1145/3292500.3330701"),
    ("http://dx.doi.org/10.1000/a.", "10.1000/a"), ("N/A", ""), ("10.1/x", ""), ("", "")])
def test_dois_are_compared_bare_and_lower_cased(text: str, doi: str) -> None:
    assert normalise_doi(text) == doi


@pytest.mark.parametrize(("text", "arxiv"), [
    ("2401.01234", "2401.01234"), ("arXiv:2401.01234v2", "2401.01234"),
    ("https://arxiv.org/abs/1706.03762v5", "1706.03762"),
    ("https://arxiv.org/pdf/2401.01234v3.pdf", "2401.01234"),
    ("hep-th/9901001", "hep-th/9901001"), ("math.GT/0309136", "math.gt/0309136"),
    ("https://example.org/abs/2401.01234", ""), ("1234", "")])
def test_arxiv_ids_are_compared_without_version(text: str, arxiv: str) -> None:
    assert normalise_arxiv_id(text) == arxiv


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_every_format_that_carries_them_keeps_them(tmp_path: Path) -> None:
    bib = write(tmp_path / "a.bib", r"""
@article{one, title={One}, abstract={A.}, doi={10.1000/ONE}}
@misc{two, title={Two}, abstract={B.}, eprint={2401.01234v2}, archivePrefix={arXiv}}
@misc{three, title={Three}, abstract={C.}, eprint={hep-th/9901001}, eprinttype={arxiv}}
@misc{four, title={Four}, abstract={D.}, eprint={1234.5678}, archivePrefix={HAL}, doi={N/A}}
""")
    got = {p.id: (p.doi, p.arxiv_id) for p in read_papers([bib])}
    assert got == {"one": ("10.1000/one", ""), "two": ("", "2401.01234"),
                   "three": ("", "hep-th/9901001"), "four": ("", "")}
    ris = write(tmp_path / "a.ris", "TY  - JOUR\nTI  - R\nAB  - x\nDO  - 10.1000/RIS\nER  -\n")
    assert read_papers([ris])[0].doi == "10.1000/ris"
    csl = write(tmp_path / "a.json", json.dumps([{"id": "c", "title": "C", "abstract": "x",
                                                  "issued": {"date-parts": [[2020]]},
                                                  "DOI": "10.1000/CSL"}]))
    assert read_papers([csl])[0].doi == "10.1000/csl"
    arxiv = write(tmp_path / "snapshot.jsonl", json.dumps({
        "id": "2401.01234", "title": "X", "abstract": "Y", "categories": "cs.LG",
        "versions": [{"version": "v1", "created": "Mon, 1 Jan 2024 00:00:00 GMT"}],
        "doi": "10.1000/journal"}) + "\n")
    paper = read_papers([arxiv])[0]
    assert (paper.arxiv_id, paper.doi) == ("2401.01234", "10.1000/journal")
    ours = write(tmp_path / "ours.jsonl", "\n".join(json.dumps(r) for r in [
        {"id": "a", "abstract": "x", "doi": "https://doi.org/10.1000/A"},
        {"id": "b", "abstract": "x", "url": "https://arxiv.org/abs/2001.00001v3"},
        {"id": "c", "abstract": "x", "doi": "10.48550/arXiv.2305.00002"}]) + "\n")
    got = {p.id: (p.doi, p.arxiv_id) for p in read_papers([ours])}
    assert got == {"a": ("10.1000/a", ""), "b": ("", "2001.00001"),
                   "c": ("10.48550/arxiv.2305.00002", "2305.00002")}
    bad = write(tmp_path / "bad.jsonl", json.dumps({"id": "a", "abstract": "x",
                                                    "doi": "not a doi"}) + "\n")
    with pytest.raises(InputError, match="bad.jsonl:1: field 'doi': expected a DOI"):
        read_papers([bad])


def test_a_bibliography_matches_the_index_by_doi_and_arxiv_id_before_titles(
        tmp_path: Path) -> None:
    papers = [{"id": "p1", "title": "Attention is all you need", "abstract": "Transformers.",
               "doi": "10.1000/att"},
              {"id": "p2", "title": "Graph diffusion", "abstract": "Diffusion on graphs.",
               "url": "https://arxiv.org/abs/2001.00001"},
              {"id": "p3", "title": "Sparse attention", "abstract": "Sparse transformers."}]
    engine = SearchEngine.build(tmp_path / "index", papers, backend="torch")
    # Other ids and other titles (a preprint's, say): only the identifiers tie them.
    given = [{"id": "ref1", "title": "A preprint title", "doi": "https://doi.org/10.1000/ATT"},
             {"id": "ref2", "title": "Old title", "arxiv_id": "arXiv:2001.00001v2"}]
    hits = engine.similar_to_papers(given, 3)
    assert [hit.paper.id for hit in hits] == ["p3"]  # p1 and p2 were matched, so excluded
    assert engine.get("p1").doi == "10.1000/att" and engine.get("p2").arxiv_id == "2001.00001"
    engine.close()


def test_bibtex_export_writes_them_back(tmp_path: Path) -> None:
    paper = Paper(id="x", abstract="A.", title="T", doi="10.1000/xyz", arxiv_id="2401.01234")
    text = to_bibtex([paper])
    assert "doi = {10.1000/xyz}" in text and "eprint = {2401.01234}" in text
    assert "archiveprefix = {arXiv}" in text
    again = read_papers([write(tmp_path / "back.bib", text)])[0]
    assert (again.doi, again.arxiv_id) == ("10.1000/xyz", "2401.01234")
