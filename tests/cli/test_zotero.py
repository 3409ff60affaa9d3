"""A Zotero library from the command line: build and add from it, filter by its
collections, recommend from a collection, and keep an index in step with `sync`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from embedsearch import SearchEngine
from embedsearch.readers import read_papers
from embedsearch.storage.directory import IndexDirectory
from tests.conftest import SEED_COUNT, CliResult, ids_on_disk
from tests.zotero_library import ZoteroWriter


def _library(folder: Path, seed_files: list[Path]) -> tuple[ZoteroWriter, dict[str, int]]:
    """Twelve real papers of the seed sample: eight in "Reading", four in its
    sub-collection "Reading/Graphs" (tagged), and one title-only item."""
    writer = ZoteroWriter(folder)
    reading = writer.collection("Reading")
    graphs = writer.collection("Graphs", reading)
    items: dict[str, int] = {}
    for number, paper in enumerate(read_papers(seed_files)[:12]):
        item, key = writer.item(
            "conferencePaper", fields={"title": f"Zotero copy: {paper.title}",
                                       "abstractNote": paper.abstract, "date": "2025",
                                       "proceedingsTitle": "ICLR 2025"},
            creators=[("Ada", f"Author{number}")],
            tags=["graphs"] if number >= 8 else [],
            collections=[graphs if number >= 8 else reading])
        items[f"zotero:{key}"] = item
    writer.item("book", fields={"title": "A book without an abstract"})
    return writer, items


def _vectors(index: Path, ids: list[str]) -> np.ndarray:
    with SearchEngine.open(index) as engine, engine.snapshot() as view:
        keys = view.keys_of(ids)
        return view.vectors(np.array([keys[paper_id] for paper_id in ids], dtype=np.int64))


def _generation(index: Path) -> int:
    return IndexDirectory(index).read_manifest().generation


def test_a_library_is_built_synced_and_searched(tmp_path: Path, seed_files: list[Path],
                                                cli: Callable[..., CliResult]) -> None:
    writer, items = _library(tmp_path / "Zotero", seed_files)
    index = tmp_path / "index"
    built = cli("build", *seed_files, "--zotero", writer.folder, "--out", index, "-q")
    assert built.code == 0, built.err
    assert ids_on_disk(index) >= set(items) and len(ids_on_disk(index)) == SEED_COUNT + 12
    inside = cli("search", "graph neural networks", "--index", index, "-k", "20",
                 "--collection", "graphs", "--json", "-q").json_lines()
    assert inside and {hit["id"] for hit in inside} <= set(items)
    assert all(hit["collections"] == ["Reading/Graphs"] for hit in inside)
    assert len(cli("search", "learning", "--index", index, "-k", "50", "--collection",
                   "Reading", "--json", "-q").json_lines()) == 12

    unchanged = cli("sync", "--zotero", writer.folder, "--index", index, "--json", "-q")
    plan = unchanged.json_lines()[0]
    assert plan == {"added": [], "updated": [], "removed": [], "unchanged": 12,
                    "title_only": plan["title_only"], "dry_run": False}
    assert len(plan["title_only"]) == 1  # the book: reported, not indexed
    first = _generation(index)

    ids = list(items)
    writer.set_field(items[ids[0]], "title", "A retitled paper about graphs")
    writer.set_field(items[ids[1]], "date", "2024")  # metadata only: the same text
    writer.trash(items[ids[2]])
    writer.delete(items[ids[3]])
    _, new_key = writer.item(fields={"title": "A new item", "abstractNote": read_papers(
        seed_files)[20].abstract})
    planned = cli("sync", "--zotero", writer.folder, "--index", index, "--dry-run", "-q")
    assert planned.code == 0, planned.err
    assert set(planned.out.splitlines()) == {
        f"would add zotero:{new_key}", f"would update {ids[0]}", f"would update {ids[1]}",
        f"would remove {ids[2]}", f"would remove {ids[3]}"}
    assert _generation(index) == first  # a dry run writes nothing

    before = _vectors(index, ids[:2])
    done = cli("sync", "--zotero", writer.folder, "--index", index, "--json", "-q")
    report = done.json_lines()[0]
    assert report["added"] == [f"zotero:{new_key}"] and set(report["removed"]) == {
        ids[2], ids[3]}
    assert set(report["updated"]) == {ids[0], ids[1]}
    after = _vectors(index, ids[:2])
    assert np.array_equal(after[1], before[1])  # the year changed, not the text: kept
    assert not np.allclose(after[0], before[0])  # a new title: encoded again
    assert _generation(index) == first + 1  # every change in one generation
    held = ids_on_disk(index)
    assert f"zotero:{new_key}" in held and ids[2] not in held and ids[3] not in held
    assert len(held) == SEED_COUNT + 12 - 2 + 1  # the seed papers are not the library's
    shown = cli("show", ids[0], "--index", index, "--json", "-q").json_lines()[0]
    assert shown["title"] == "A retitled paper about graphs"
    again = cli("sync", "--zotero", writer.folder, "--index", index, "--json", "-q")
    assert again.json_lines()[0]["unchanged"] == 11 and _generation(index) == first + 1
    assert cli("show", ids[1], "--index", index, "--json", "-q").json_lines()[0]["year"] == 2024
    writer.close()


def test_recommendations_from_a_collection(tmp_path: Path, seed_files: list[Path],
                                           cli: Callable[..., CliResult],
                                           seed_index: Path) -> None:
    writer, items = _library(tmp_path / "Zotero", seed_files)
    spec = f"zotero:{writer.folder}?collection=Graphs"
    hits = cli("similar", "--from", spec, "--index", seed_index, "-k", "5", "--json",
               "-q").json_lines()
    # The collection's four papers are copies of seed papers 8-11: the index holds them
    # (same abstract, other title), so they are matched and never recommended.
    assert len(hits) == 5
    stray = cli("build", *seed_files, "--out", tmp_path / "x", "--collection", "Graphs")
    assert stray.code != 0 and "give --zotero" in stray.err
    stray = cli("build", *seed_files, "--out", tmp_path / "x", "--group-library", "Lab")
    assert stray.code != 0 and "--group-library chooses" in stray.err
    grouped = cli("build", "--zotero", writer.folder, "--group-library", "Nope", "--out",
                  tmp_path / "z")
    assert grouped.code != 0 and "no group library named 'Nope'" in grouped.err
    missing = cli("build", "--out", tmp_path / "y")
    assert missing.code != 0 and "--zotero" in missing.err
    writer.close()


def test_a_sync_after_the_reader_kept_item_types_rewrites_nothing(
        tmp_path: Path, seed_files: list[Path], cli: Callable[..., CliResult]) -> None:
    # An index synced before the reader kept item types and bibliographic fields holds
    # its papers without them: the first sync after an upgrade must not rewrite them all
    # (a digest would list every one as new). A paper that changes gets them.
    import dataclasses

    from embedsearch.readers import ZoteroLibrary

    writer, items = _library(tmp_path / "Zotero", seed_files)
    papers = read_papers([ZoteroLibrary(writer.folder)])
    assert {paper.entry_type for paper in papers} == {"inproceedings"}
    old = [dataclasses.replace(paper, entry_type="", bib_fields=()) for paper in papers]
    index = tmp_path / "index"
    SearchEngine.build(index, old).close()
    report = cli("sync", "--zotero", writer.folder, "--index", index, "--json", "-q")
    assert report.json_lines()[0]["unchanged"] == 12
    changed = list(items)[0]
    writer.set_field(items[changed], "title", "A retitled paper about graphs")
    report = cli("sync", "--zotero", writer.folder, "--index", index, "--json", "-q")
    assert report.json_lines()[0]["updated"] == [changed]
    shown = cli("show", changed, "--index", index, "--json", "-q").json_lines()[0]
    assert shown["entry_type"] == "inproceedings"
    writer.close()


def test_an_attachment_read_in_full_answers_with_its_page(
        tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    from tests.readers.test_pdf import one_column
    from tests.readers.test_zotero_fulltext import ABSTRACT, BODY, CACHED_CLAIM, zotero7_cache

    writer = ZoteroWriter(tmp_path / "Zotero")
    item, key = writer.item(fields={"title": "Graph networks", "abstractNote": ABSTRACT})
    attachment = writer.pdf(item, one_column(tmp_path / "paper.pdf").read_bytes())
    writer.ft_cache(attachment, zotero7_cache(BODY), pages=(3, 3))
    writer.item(fields={"title": "Another paper", "abstractNote": "We study bandits."})
    index = tmp_path / "index"
    assert cli("build", "--zotero", writer.folder, "--out", index, "-q").code == 0
    hit = cli("search", "zero-padding against projection shortcuts", "--index", index,
              "-k", "1", "--json", "-q").json_lines()[0]
    assert hit["id"] == f"zotero:{key}"
    assert hit["passage"]["page"] == 2 and CACHED_CLAIM in str(hit["passage"]["text"])
    assert not cli("sync", "--zotero", writer.folder, "--index", index, "--json",
                   "-q").json_lines()[0]["updated"]
    # --abstract-only: the item as its record, its passages given up.
    planned = cli("sync", "--zotero", writer.folder, "--index", index, "--abstract-only",
                  "--dry-run", "-q")
    assert planned.out.splitlines() == [f"would update zotero:{key}"]
    writer.close()


def test_every_library_in_one_index_each_paper_knowing_its_own(
        tmp_path: Path, seed_files: list[Path], cli: Callable[..., CliResult]) -> None:
    writer, items = _library(tmp_path / "Zotero", seed_files)  # twelve in My Library
    seeds = read_papers(seed_files)
    club, lab = writer.group("Reading Club", 4711), writer.group("Lab", 99)
    grouped: dict[str, list[str]] = {"Reading Club": [], "Lab": []}
    for number, paper in enumerate(seeds[12:18]):
        name, library = (("Reading Club", club), ("Lab", lab))[number % 2]
        group_id = 4711 if library == club else 99
        _, key = writer.item(fields={"title": paper.title, "abstractNote": paper.abstract},
                             library=library)
        grouped[name].append(f"zotero:groups/{group_id}/{key}")
    index = tmp_path / "index"
    built = cli("build", "--zotero", writer.folder, "--all-libraries", "--out", index, "-q")
    assert built.code == 0, built.err
    assert ids_on_disk(index) == set(items) | set(grouped["Reading Club"]) | set(grouped["Lab"])

    def found(*libraries: str) -> set[str]:
        chosen = [arg for name in libraries for arg in ("--library", name)]
        hits = cli("search", "learning", "--index", index, "-k", "30", *chosen, "--json",
                   "-q").json_lines()
        return {str(hit["id"]) for hit in hits}

    assert found("reading club") == set(grouped["Reading Club"])
    assert found("My Library") == set(items)
    assert found("Lab", "My Library") == set(items) | set(grouped["Lab"])
    shown = cli("show", grouped["Lab"][0], "--index", index, "--json", "-q").json_lines()[0]
    assert shown["library"] == "Lab"
    # Each library kept in step: the user leaves the lab, the club gains an item.
    writer.leave(lab)
    _, new = writer.item(fields={"title": seeds[20].title, "abstractNote": seeds[20].abstract},
                         library=club)
    report = cli("sync", "--zotero", writer.folder, "--all-libraries", "--index", index,
                 "--json", "-q").json_lines()[0]
    assert report["added"] == [f"zotero:groups/4711/{new}"]
    assert sorted(report["removed"]) == sorted(grouped["Lab"]) and report["unchanged"] == 15
    refused = cli("build", "--zotero", writer.folder, "--all-libraries", "--group-library",
                  "Lab", "--out", tmp_path / "x")
    assert refused.code != 0 and "give one of them" in refused.err
    writer.close()
