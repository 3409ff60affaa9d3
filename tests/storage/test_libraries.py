"""Each paper's library (and its file stamp) in the local paper store: kept through
writes and merges, filtered in SQL, and absent from a store of papers without one, which
is what it was before libraries existed."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from embedsearch import Filters, Milvus, Paper, QueryError, SearchEngine
from embedsearch.filters import MY_LIBRARY, library_name
from embedsearch.readers import read_papers
from embedsearch.storage.local.paper_store import PaperStore
from tests.storage.test_every_storage import needs_milvus

GROUPS = ("Reading Club", "Lab")


def _papers(seed_files: list[Path], count: int = 9) -> list[Paper]:
    """Seed papers, every third in My Library, the others in one of two groups."""
    papers = read_papers(seed_files)[:count]
    return [dataclasses.replace(paper, library="" if n % 3 == 0 else GROUPS[n % 3 - 1],
                                file_stamp=f"stamp{n}" if n % 2 else "")
            for n, paper in enumerate(papers)]


def _schema(store: Path) -> set[tuple[str, str]]:
    db = sqlite3.connect(store)
    try:
        return {(str(name), str(sql)) for name, sql in
                db.execute("SELECT name, sql FROM sqlite_master")}
    finally:
        db.close()


def _store_tables(index: Path) -> set[tuple[str, str]]:
    return set().union(*(_schema(store) for store in index.rglob("papers.sqlite")))


def _build(path: Path, papers: list[Paper]) -> SearchEngine:
    # Encoded by the bundled model: the dev corpus's vectors are not beside every clone.
    return SearchEngine.build(path, papers)


def test_libraries_are_kept_written_merged_and_filtered(tmp_path: Path,
                                                        seed_files: list[Path]) -> None:
    papers = _papers(seed_files)
    engine = _build(tmp_path / "index", papers[:6])
    try:
        engine.add(papers[6:])
        engine.compact()  # two segments merged into one: the libraries go with them
        stored = engine.get_many([paper.id for paper in papers])
        assert [(p.library, p.file_stamp) for p in stored.values()] == [
            (p.library, p.file_stamp) for p in papers]
        by_library = {name: {p.id for p in papers if library_name(p.library) == name}
                      for name in (MY_LIBRARY, *GROUPS)}
        for names in (["reading club"], [MY_LIBRARY], ["my library", "LAB"]):
            filters = Filters.parse(libraries=names)
            wanted = set().union(*(ids for name, ids in by_library.items()
                                   if name.casefold() in {n.casefold() for n in names}))
            hits = engine.search("learning", k=20, filters=filters)
            assert {hit.paper.id for hit in hits} == wanted, names
            assert engine.count(filters) == len(wanted)
        hit = engine.search("learning", k=1, filters=Filters.parse(libraries=["Lab"]))[0]
        assert hit.to_dict()["library"] == "Lab"  # what the page's facet counts
        assert Filters.parse(libraries=["Lab", "Reading Club"]).describe() == [
            "libraries Lab or Reading Club"]
    finally:
        engine.close()
    assert "paper_origins" in {name for name, _ in _store_tables(tmp_path / "index")}


def test_a_store_without_libraries_is_as_before(tmp_path: Path,
                                                seed_files: list[Path]) -> None:
    papers = read_papers(seed_files)[:6]
    with _build(tmp_path / "index", papers) as engine:
        assert engine.count(Filters.parse(libraries=["My Library"])) == 6  # all are mine
        assert engine.count(Filters.parse(libraries=["Lab"])) == 0
        assert all("library" not in hit.to_dict() for hit in engine.search("learning", k=3))
    # The store holds what the schema of a new store makes, and nothing more.
    PaperStore.create(tmp_path / "empty.sqlite").close()
    assert _store_tables(tmp_path / "index") == _schema(tmp_path / "empty.sqlite")
    # A filter that is not given leaves what saved searches write as it was.
    assert "libraries" not in Filters.parse(year="2024").to_dict()


def test_an_empty_library_name_is_refused() -> None:
    with pytest.raises(QueryError) as refused:
        Filters.parse(libraries=[" "])
    assert refused.value.parameter == "libraries"


def test_a_library_read_back_from_records() -> None:
    from embedsearch.readers.records import papers_from_records

    [paper] = papers_from_records([{"id": "a", "abstract": "An abstract.", "library": "Lab"}])
    assert paper.library == "Lab" and paper.to_dict()["library"] == "Lab"


@needs_milvus
def test_a_milvus_collection_keeps_libraries_and_refuses_to_filter_by_them(
        tmp_path: Path, seed_files: list[Path]) -> None:
    papers = _papers(seed_files, 4)
    with SearchEngine.build(tmp_path / "index", papers,
                            storage=Milvus(str(tmp_path / "papers.db"), "papers")) as engine:
        stored = engine.get_many([paper.id for paper in papers])
        assert [(p.library, p.file_stamp) for p in stored.values()] == [
            (p.library, p.file_stamp) for p in papers]
        with pytest.raises(QueryError, match="needs an index in local files") as refused:
            engine.search("learning", k=3, filters=Filters.parse(libraries=["Lab"]))
        assert refused.value.parameter == "libraries"
