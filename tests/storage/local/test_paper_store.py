"""The SQLite paper store: a store written before identifiers (and entry types) existed
reads and grows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from embedsearch.papers import Paper
from embedsearch.storage.local.paper_store import PaperStore

BOOK = Paper(id="new", abstract="y", doi="10.1000/new", entry_type="book",
             bib_fields=(("edition", "2"), ("publisher", "MIT Press")))


def test_a_store_written_before_identifiers_reads_and_grows(tmp_path: Path) -> None:
    path = tmp_path / "papers.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE papers (key INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL, title_derived INTEGER NOT NULL, abstract TEXT NOT NULL,
            authors TEXT NOT NULL, keywords TEXT NOT NULL, venue TEXT NOT NULL,
            year INTEGER, url TEXT NOT NULL, tldr TEXT NOT NULL, primary_area TEXT NOT NULL);
        CREATE TABLE paper_keywords (key INTEGER NOT NULL, keyword TEXT NOT NULL);
        INSERT INTO papers VALUES (1, 'old', 'Old', 0, 'x', '[]', '[]', '', NULL, '', '', '');
    """)
    db.commit()
    db.close()
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
