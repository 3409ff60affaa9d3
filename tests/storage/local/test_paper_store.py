"""The SQLite paper store: a store written before identifiers (and entry types) existed
reads and grows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from embedsearch.filters import Filters
from embedsearch.papers import Paper
from embedsearch.storage.local.paper_store import PaperStore

BOOK = Paper(id="new", abstract="y", doi="10.1000/new", entry_type="book",
             bib_fields=(("edition", "2"), ("publisher", "MIT Press")))


def _old_store(path: Path, rows: str) -> None:
    """A store as written before identifiers, collections and origins existed, holding
    what the SQL `rows` insert."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE papers (key INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL, title_derived INTEGER NOT NULL, abstract TEXT NOT NULL,
            authors TEXT NOT NULL, keywords TEXT NOT NULL, venue TEXT NOT NULL,
            year INTEGER, url TEXT NOT NULL, tldr TEXT NOT NULL, primary_area TEXT NOT NULL);
        CREATE TABLE paper_keywords (key INTEGER NOT NULL, keyword TEXT NOT NULL);
    """ + rows)
    db.commit()
    db.close()


def test_a_store_written_before_identifiers_reads_and_grows(tmp_path: Path) -> None:
    path = tmp_path / "papers.sqlite"
    _old_store(path, "INSERT INTO papers VALUES (1, 'old', 'Old', 0, 'x', '[]', '[]', '', "
                     "NULL, '', '', '');")
    store = PaperStore.open(path)
    assert store.papers([1])[1].doi == "" and store.keys_by_identifier("doi", ["a"]) == []
    assert (store.papers([1])[1].entry_type, store.papers([1])[1].bib_fields) == ("", ())
    assert store.used_keys() == 1
    store.close()
    with PaperStore.transaction(path) as writable:  # an upgrade's private copy
        writable.insert(np.array([2]), [BOOK])
    store = PaperStore.open(path)
    assert store.keys_by_identifier("doi", ["10.1000/new"]) == [("10.1000/new", 2)]
    assert store.papers([2])[2] == BOOK  # its entry type and bibliographic fields kept
    store.close()


def test_a_merge_copies_the_live_papers_of_each_store_in_sqlite(tmp_path: Path) -> None:
    _old_store(tmp_path / "old.sqlite", """
        INSERT INTO papers VALUES (1, 'old', 'Old', 0, 'x', '[]', '["graphs"]', 'ICLR', 2020,
                                   '', '', '');
        INSERT INTO paper_keywords VALUES (1, 'graphs');
        INSERT INTO papers VALUES (2, 'gone', 'Gone', 0, 'y', '[]', '[]', '', NULL, '', '', '');
    """)
    newer = [BOOK, Paper(id="zot", abstract="z", keywords=("Graphs",),
                         collections=("Thesis/Methods",), library="Lab group",
                         file_stamp="123"),
             Paper(id="removed", abstract="r", collections=("Thesis",))]
    with PaperStore.transaction(tmp_path / "new.sqlite", create=True) as store:
        store.insert(np.array([5, 6, 7]), newer)
    with PaperStore.transaction(tmp_path / "merged.sqlite", create=True) as merged:
        merged.copy_papers(tmp_path / "old.sqlite", np.array([2]))
        merged.copy_papers(tmp_path / "new.sqlite", np.array([7]))
    merged = PaperStore.open(tmp_path / "merged.sqlite")
    old = PaperStore.open(tmp_path / "old.sqlite")
    assert merged.keys().tolist() == [1, 5, 6]
    assert merged.papers([1, 5, 6]) == {1: old.papers([1])[1], 5: BOOK, 6: newer[1]}
    assert merged.keys_by_identifier("doi", ["10.1000/new"]) == [("10.1000/new", 5)]
    for filters, keys in ((Filters(keywords=("graphs",)), [1, 6]),
                          (Filters(collections=("Thesis",)), [6]),
                          (Filters(libraries=("Lab group",)), [6]),
                          (Filters(venues=("iclr",)), [1])):
        assert merged.filter_keys(filters).tolist() == keys, filters
    assert merged.integrity() == "ok"
