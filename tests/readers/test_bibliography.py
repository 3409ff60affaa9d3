"""The bibliography researchers really have: entries without abstracts, a broken brace,
crossref and xdata, RIS venues by exporter, a quiet --quiet and a --report."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch import InputError, SearchEngine, read_papers
from embedsearch.readers import read_bibliography
from tests.conftest import DEV_DATA, CliResult, needs_dev_data

Cli = Callable[..., CliResult]

# A hand-written thesis bibliography: @string macros, % comments, LaTeX accents, a
# crossref to a proceedings volume, an xdata container, and no abstract anywhere.
THESIS = r"""% Bibliography of a thesis
@string{icml = "International Conference on Machine Learning"}

@proceedings{icml2020,
  title = {Proceedings of the 37th } # icml,
  year = 2020,
  editor = {Daum{\'e}, Hal and Singh, Aarti},
  publisher = {PMLR}
}

@inproceedings{whittington2017,
  title = {An Approximation of the Error Backpropagation Algorithm in a Predictive
           Coding Network with Local {H}ebbian Synaptic Plasticity},
  author = {Whittington, James C. R. and Bogacz, Rafal},
  crossref = {icml2020}
}

@xdata{lncs, series = {Lecture Notes in Computer Science}, publisher = {Springer}, year = 2019}

@inproceedings{millidge2019,
  title = {Predictive Coding Approximates Backprop along Arbitrary Computation Graphs},
  author = {Millidge, Beren},
  booktitle = {Neural Computation},
  xdata = {lncs}
}

@article{rao1999,
  title = {Predictive coding in the visual cortex},
  author = {Rao, Rajesh P. N. and Ballard, Dana H.},
  journal = {Nature Neuroscience},
  year = 1999
}
"""

ABSTRACTS = r"""@article{good1,
  title = {Sparse attention},
  abstract = {We study sparse attention in transformers.},
  year = 2024
}

@article{broken,
  title = {A field never closed,
  abstract = {This entry lost its closing brace by a hand edit.},
  year = 2023

@article{good2,
  title = {Graph diffusion},
  abstract = {Diffusion on graphs for semi-supervised learning.},
  year = 2022
}

@misc{nothing, note = {neither a title nor an abstract}}

@article{titleonly, title = {Only a title here}, year = 2021}
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path




def test_crossref_children_take_their_parents_venue_and_year(tmp_path: Path,
                                                            warned: list[str]) -> None:
    found = read_bibliography([write(tmp_path / "thesis.bib", THESIS)], title_only=True)
    papers = {paper.id: paper for paper in found.papers}
    # The proceedings volume and the xdata container are not papers, nor skipped ones.
    assert sorted(papers) == ["millidge2019", "rao1999", "whittington2017"]
    assert found.skipped == [] and warned == []
    child = papers["whittington2017"]
    assert child.venue.endswith("International Conference on Machine Learning")
    assert child.year == 2020
    assert child.authors == ("James C. R. Whittington", "Rafal Bogacz")  # not the editors
    assert (papers["millidge2019"].year, papers["millidge2019"].venue) == (2019,
                                                                          "Neural Computation")
    assert all(paper.title_only for paper in papers.values())


def test_a_broken_entry_is_skipped_and_named_and_the_rest_is_read(tmp_path: Path,
                                                                  warned: list[str]) -> None:
    path = write(tmp_path / "refs.bib", ABSTRACTS)
    found = read_bibliography([path])
    assert [paper.id for paper in found.papers] == ["good1", "good2"]
    # One warning for the file, every kind of problem in it, with lines and keys.
    (message,) = warned
    assert message.startswith(f"{path}: ")
    assert "skipped 1 entry without an abstract: titleonly (line 20)" in message
    assert "skipped 1 malformed entry: broken (line 7)" in message
    assert "skipped 1 entry with neither abstract nor title" in message
    reasons = {entry.label: entry for entry in found.skipped}
    assert reasons["broken (line 7)"].malformed and reasons["broken (line 7)"].line == 7
    # --strict keeps the all-or-nothing reading.
    with pytest.raises(InputError, match=r"refs.bib:7: malformed BibTeX entry.*--strict"):
        read_papers([path], strict=True)


def test_garbage_is_still_an_error_not_papers(tmp_path: Path) -> None:
    noise = tmp_path / "noise.bib"
    noise.write_bytes(bytes(range(32, 127)) * 40 + b"@article{x, title={y")
    with pytest.raises(InputError, match="no papers could be read|no papers found"):
        read_papers([noise], title_only=True)
    random = tmp_path / "random.ris"
    random.write_bytes(os.urandom(4000).replace(b"\0", b"x"))
    with pytest.raises(InputError):
        read_papers([random], title_only=True)


RIS_VENUES = """TY  - CONF
TI  - Only a publisher
AB  - A PMLR paper exported with its publisher alone.
PB  - PMLR
ER  -
TY  - JOUR
TI  - Abbreviated journal
AB  - An export that writes J2 and a publisher.
J2  - J. Mach. Learn. Res.
PB  - JMLR
ER  -
TY  - JOUR
TI  - Journal name
AB  - JO is preferred to the publisher.
JO  - Neural Computation
PB  - MIT Press
ER  -
TY  - JOUR
TI  - Cut short
AB  - This entry never ends
TY  - JOUR
TI  - After the cut
AB  - Read all the same.
T2  - NeurIPS
ER  -
"""


def test_ris_venues_by_exporter_and_a_cut_entry(tmp_path: Path, warned: list[str]) -> None:
    path = write(tmp_path / "refs.ris", RIS_VENUES)
    papers = read_papers([path])
    assert [paper.venue for paper in papers] == ["PMLR", "J. Mach. Learn. Res.",
                                                 "Neural Computation", "NeurIPS"]
    (message,) = warned
    assert "skipped 1 malformed entry: Cut short (line 18)" in message


def test_an_index_refuses_title_only_entries_unless_asked(
        cli: Cli, tmp_path: Path, seed_files: list[Path]) -> None:
    thesis = write(tmp_path / "thesis.bib", THESIS)
    refused = cli("build", thesis, "--out", tmp_path / "a", "--backend", "torch")
    assert refused.code == 1 and "--allow-title-only" in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    built = cli("build", thesis, "--out", tmp_path / "b", "--backend", "torch",
                "--allow-title-only")
    assert built.code == 0, built.err
    with SearchEngine.open(tmp_path / "b") as engine:
        assert len(engine) == 3 and engine.get("rao1999").title_only
        hits = engine.search("predictive coding and backpropagation", k=3, mode="dense")
        assert {hit.paper.id for hit in hits[:2]} == {"whittington2017", "millidge2019"}
    with pytest.raises(InputError, match="allow_title_only=True"):
        SearchEngine.build(tmp_path / "c", read_papers([thesis], title_only=True))


def test_a_csv_of_titles_is_indexed_with_allow_title_only(cli: Cli, tmp_path: Path) -> None:
    # A CSV without an abstract column was refused even with --allow-title-only.
    titles = write(tmp_path / "titles.csv", "id,title,year\n"
                   "w17,An approximation of the error backpropagation algorithm in a "
                   "predictive coding network,2017\n"
                   "m19,Deep reinforcement learning for robotic grasping,2019\n")
    refused = cli("build", titles, "--out", tmp_path / "a")
    assert refused.code == 1 and "none of its 2 entries has an abstract" in refused.err
    assert "--allow-title-only indexes them on their titles" in refused.err
    built = cli("build", titles, "--out", tmp_path / "b", "--allow-title-only")
    assert built.code == 0, built.err
    hits = cli("search", "predictive coding", "--index", tmp_path / "b", "-k", "1",
               "--json").json_lines()
    assert [(hit["id"], hit["year"]) for hit in hits] == [("w17", 2017)]


def test_quiet_is_quiet_and_report_lists_every_entry(cli: Cli, seed_index: Path,
                                                     tmp_path: Path) -> None:
    refs = write(tmp_path / "refs.bib", ABSTRACTS)
    report = tmp_path / "report.json"
    result = cli("similar", "--from", refs, "--index", seed_index, "-k", "3", "--quiet",
                 "--report", report)
    assert result.code == 0 and result.err == ""
    entries = {entry["entry"]: entry for entry in json.loads(report.read_text())}
    assert entries["broken (line 7)"]["malformed"] is True
    assert entries["titleonly"]["reason"].startswith("title only")
    assert any(entry["reason"] == "no abstract and no title" for entry in entries.values())
    loud = cli("similar", "--from", refs, "--index", seed_index, "-k", "3")
    assert "malformed entry" in loud.err
    assert "Examples: 3 given, 0 found in the index, 2 encoded from abstracts, 1 from titles " \
        "alone." in loud.err


def test_recommendations_from_a_bibliography_without_abstracts(
        cli: Cli, seed_index: Path, tmp_path: Path) -> None:
    # Titles of two seed papers' topics, no abstracts: the papers on them come first.
    refs = write(tmp_path / "titles.bib", r"""
@inproceedings{a, title = {Offline Preference-Based Reinforcement Learning with
                           Human Feedback}, year = 2024}
@inproceedings{b, title = {Learning Rewards from Pairwise Trajectory Comparisons},
               year = 2023}
""")
    hits = cli("similar", "--from", refs, "--index", seed_index, "-k", "3",
               "--json").json_lines()
    assert len(hits) == 3 and hits[0]["id"] == "000_ae22c05437d8edef:3"


@needs_dev_data
@pytest.mark.data
@pytest.mark.slow
def test_titles_on_one_topic_find_its_paper_among_5000(cli: Cli, tmp_path: Path) -> None:
    """A thesis bibliography that names a topic in titles, its abstracts mostly absent:
    the one paper of that topic the index holds comes within the top 20 of 5,000."""
    from embedsearch.evaluation.devset import DevSet

    dev = DevSet(DEV_DATA)
    stored = dev.stored_vectors()
    assert stored is not None
    topic = [i for i, p in enumerate(dev.papers) if "predictive coding" in p.title.lower()]
    target, cited = topic[-1], topic[:-1]
    others = [i for i in range(len(dev.papers)) if i not in topic][:4999]
    rows = [target, *others]
    SearchEngine.build(tmp_path / "index", [dev.papers[i] for i in rows],
                       vectors=stored[rows], backend="torch").close()
    entries = []
    for n, i in enumerate(cited):  # two of ten keep their abstracts
        paper = dev.papers[i]
        abstract = f"  abstract = {{{paper.abstract}}},\n" if n < 2 else ""
        entries.append(f"@article{{ref{n},\n  title = {{{paper.title}}},\n{abstract}"
                       f"  year = {paper.year or 2020}\n}}\n")
    bib = write(tmp_path / "thesis.bib", "\n".join(entries))
    hits = cli("similar", "--from", bib, "--index", tmp_path / "index", "-k", "20",
               "--json").json_lines()
    assert dev.papers[target].id in [hit["id"] for hit in hits]
    # Left out, as before, the title-only entries' topic is found less surely: the two
    # abstracts alone place it lower (or not at all) in the same top 20.
    alone = cli("similar", "--from", write(tmp_path / "two.bib", "\n".join(entries[:2])),
                "--index", tmp_path / "index", "-k", "20", "--json").json_lines()
    ranks = [[hit["id"] for hit in found].index(dev.papers[target].id)
             if dev.papers[target].id in [hit["id"] for hit in found] else 99
             for found in (hits, alone)]
    assert ranks[0] <= ranks[1]


def test_post_bibliography_reads_a_file_and_matches_it_to_the_index(
        seed_engine: SearchEngine) -> None:
    from fastapi.testclient import TestClient

    from embedsearch.server import create_app

    held = seed_engine.get("000_ae22c05437d8edef:3")
    text = (f"@article{{mine, title={{{held.title}}}}}\n"  # another key, the same title
            "@article{out, title={Sparse attention}, abstract={We sparsify attention.}}\n"
            "@article{bare, title={Graph diffusion for molecules}}\n"
            "@article{broken, title={never closed,\n")
    with TestClient(create_app(seed_engine, compute_map=False),
                    base_url="http://localhost") as client:
        response = client.post("/bibliography", json={"name": "thesis.bib", "text": text})
        assert response.status_code == 200, response.text
        data = response.json()
        assert [(p["id"], p["match"]) for p in data["papers"]] == [
            ("mine", held.id), ("out", None), ("bare", None)]
        assert data["papers"][2]["abstract"] == ""
        (skipped,) = data["skipped"]
        assert skipped["malformed"] and skipped["entry"] == "broken (line 4)"
        refused = client.post("/bibliography", json={"name": "refs.docx", "text": "x"})
        assert refused.status_code == 422 and refused.json()["parameter"] == "name"
        empty = client.post("/bibliography", json={"name": "n.bib", "text": "% nothing\n"})
        assert empty.status_code == 422 and empty.json()["parameter"] == "text"
        assert empty.json()["detail"].startswith("text: n.bib: no papers found")
        assert "upload" not in empty.json()["detail"]
