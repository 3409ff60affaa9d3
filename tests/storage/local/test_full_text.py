"""Full text in a local index: passages stored in their paper's segment, searched with
the abstracts, named by the hits, and kept through every write (add, remove, merge,
compact, backup) and check; an index of abstracts alone is written as before.

The bodies are real text: the abstracts of seed papers the index does not otherwise
hold, each set as a section of one "host" paper on a page of its own, so that the only
way to find a donor's words is through the host's passages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from embedsearch import Filters, Paper, SearchEngine
from embedsearch.bundled import corpus_files
from embedsearch.papers import Passage, split_sentences
from embedsearch.readers import read_papers
from embedsearch.storage.directory import IndexDirectory
from embedsearch.storage.local.fulltext import FULL_TEXT_DIR

ABSTRACTS = 25
DONORS = 5


def _seed() -> list[Paper]:
    return read_papers(corpus_files())


def host_paper(donors: list[Paper], paper_id: str = "host", year: int = 2031) -> Paper:
    """A paper whose body holds each donor's abstract as section i on page i + 2."""
    passages = tuple(Passage(sentence, page=number + 2, page_label=str(100 + number),
                             section=f"{number + 1} Part {number + 1}")
                     for number, donor in enumerate(donors)
                     for sentence in _halves(donor.abstract))
    return Paper(id=paper_id, title="Collected notes on many things",
                 abstract="These notes collect several studies.", year=year,
                 passages=passages, file=f"/papers/{paper_id}.pdf")


def _halves(text: str) -> list[str]:
    """The text as two passages of whole sentences."""
    sentences = split_sentences(text)
    middle = max(1, len(sentences) // 2)
    return [" ".join(part) for part in (sentences[:middle], sentences[middle:]) if part]


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Paper], list[Paper]]:
    papers = _seed()
    return papers[:ABSTRACTS], papers[ABSTRACTS:ABSTRACTS + DONORS]


@pytest.fixture(scope="module")
def full_index(tmp_path_factory: pytest.TempPathFactory,
               corpus: tuple[list[Paper], list[Paper]]) -> Path:
    abstracts, donors = corpus
    out = tmp_path_factory.mktemp("fulltext") / "index"
    SearchEngine.build(out, [*abstracts, host_paper(donors)]).close()
    return out


@pytest.fixture
def engine(full_index: Path) -> Iterator[SearchEngine]:
    opened = SearchEngine.open(full_index)
    yield opened
    opened.close()


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_a_body_statement_finds_its_paper_and_page(engine: SearchEngine, mode: str,
                                                   corpus: tuple[list[Paper], list[Paper]]
                                                   ) -> None:
    donor = corpus[1][2]
    hits = engine.search(donor.title, k=5, mode=mode)
    assert hits[0].id == "host"
    assert hits[0].passage is not None and hits[0].passage.page == 4
    assert hits[0].passage.section == "3 Part 3" and hits[0].passage.page_label == "102"
    assert hits[0].evidence in hits[0].passage.text
    assert [hit.id for hit in hits].count("host") == 1


def test_a_pasted_sentence_finds_its_source(engine: SearchEngine,
                                            corpus: tuple[list[Paper], list[Paper]]) -> None:
    donor = corpus[1][4]
    sentence = max(split_sentences(donor.abstract), key=len)
    hit = engine.search(sentence, k=1)[0]
    assert hit.id == "host" and hit.passage is not None
    assert sentence in hit.passage.text and hit.passage.page == 6


def test_the_json_hit_carries_the_passage(engine: SearchEngine,
                                          corpus: tuple[list[Paper], list[Paper]]) -> None:
    record = engine.search(corpus[1][0].title, k=1).to_records()[0]
    assert record["id"] == "host"
    assert set(record["passage"]) == {"text", "page", "page_label", "section"}
    assert record["passage"]["page"] == 2
    json.dumps(record)


def test_an_abstract_hit_names_no_passage(engine: SearchEngine,
                                          corpus: tuple[list[Paper], list[Paper]]) -> None:
    paper = corpus[0][7]
    hit = engine.search(paper.title, k=1)[0]
    assert hit.id == paper.id and hit.passage is None
    assert "passage" not in hit.to_dict()


def test_a_filter_keeps_out_the_passages_of_papers_it_refuses(
        engine: SearchEngine, corpus: tuple[list[Paper], list[Paper]]) -> None:
    title = corpus[1][1].title
    assert engine.search(title, k=1, filters=Filters(year_min=2031))[0].id == "host"
    hits = engine.search(title, k=10, filters=Filters(year_max=2030))
    assert "host" not in [hit.id for hit in hits]


def test_the_passages_and_file_of_a_paper(engine: SearchEngine,
                                          corpus: tuple[list[Paper], list[Paper]]) -> None:
    passages = engine.passages("host")
    assert passages == list(host_paper(corpus[1]).passages)
    assert engine.file_of("host") == "/papers/host.pdf"
    assert engine.passages(corpus[0][0].id) == [] and engine.file_of(corpus[0][0].id) == ""


def _segment_files(index: Path) -> list[set[str]]:
    directory = IndexDirectory(index)
    manifest = directory.read_manifest()
    return [{name.split("/", 1)[1] for name in manifest.files
             if name.startswith(record.name + "/")} for record in manifest.local.segments]


def test_an_index_of_abstracts_is_written_as_before(tmp_path: Path,
                                                    corpus: tuple[list[Paper], list[Paper]]
                                                    ) -> None:
    out = tmp_path / "index"
    SearchEngine.build(out, corpus[0][:30]).close()
    assert _segment_files(out) == [{"papers.sqlite", "vectors.faiss", "keys.npy", "lexical.npz"}]
    manifest = json.loads((out / "manifest.json").read_text())
    assert "full_text" not in json.dumps(manifest)


def test_writes_keep_the_passages_of_the_papers_they_keep(
        full_index: Path, tmp_path: Path, corpus: tuple[list[Paper], list[Paper]]) -> None:
    import shutil

    copy = tmp_path / "index"
    shutil.copytree(full_index, copy)
    donors = _seed()[ABSTRACTS + DONORS:ABSTRACTS + 2 * DONORS]
    with SearchEngine.open(copy) as engine:
        engine.add([host_paper(donors, "second")])
        assert engine.search(donors[3].title, k=1)[0].passage.page == 5  # type: ignore[union-attr]
        engine.remove(["host"])
        assert "host" not in [hit.id for hit in engine.search(corpus[1][2].title, k=20)]
        engine.compact()
        assert any(f"{FULL_TEXT_DIR}/" in name for files in _segment_files(copy)
                   for name in files)
        hit = engine.search(donors[1].title, k=1)[0]
        assert hit.id == "second" and hit.passage is not None and hit.passage.page == 3
        assert engine.passages("second") == list(host_paper(donors, "second").passages)
        assert engine.check().problems == []


def test_the_command_line_names_the_page_and_lists_passages(
        full_index: Path, corpus: tuple[list[Paper], list[Paper]], cli: Any) -> None:
    found = cli("search", corpus[1][2].title, "--index", full_index, "-k", "1")
    assert found.code == 0 and "p. 102 (§3 Part 3): " in found.out
    shown = cli("show", "host", "--index", full_index, "--passages")
    assert shown.code == 0 and f"{2 * DONORS} passages (read in full)" in shown.out
    assert "p. 100 (§1 Part 1): " in shown.out
    record = json.loads(cli("show", "host", "--index", full_index, "--passages",
                            "--json").out)
    pages = [passage.page for passage in host_paper(corpus[1]).passages]
    assert [passage["page"] for passage in record["passages"]] == pages
    plain = cli("show", corpus[0][0].id, "--index", full_index, "--passages")
    assert "No passages: the paper is known by its abstract." in plain.out
