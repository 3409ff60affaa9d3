"""Paper metadata in SQLite: records by key and id, and the keys a filter admits.

Each paper has an int64 `key`, the id its vector carries in the vector index. Each
segment of an index has its own store; keys are handed out by the index (its manifest's
`next_key`), never reused, so a removed paper's key is never given to another one and a
stale vector can never be mistaken for a new paper. (Stores written before segments
took their keys from AUTOINCREMENT; `used_keys` reads how far that went.) A paper's
library and file stamp live in a table of their own, made only in a store that has a
paper with either: a store of papers without them is what it was before they existed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ...filters import Filters, collection_names, is_my_library
from ...papers import Paper
from ...text.bibentry import bib_fields

__all__ = ["PaperStore", "STORE_FILE"]

STORE_FILE = "papers.sqlite"
_SCHEMA = """
CREATE TABLE papers (
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    title_derived INTEGER NOT NULL,
    abstract TEXT NOT NULL,
    authors TEXT NOT NULL,
    keywords TEXT NOT NULL,
    venue TEXT NOT NULL,
    year INTEGER,
    url TEXT NOT NULL,
    tldr TEXT NOT NULL,
    primary_area TEXT NOT NULL,
    doi TEXT NOT NULL DEFAULT '',
    arxiv_id TEXT NOT NULL DEFAULT '',
    collections TEXT NOT NULL DEFAULT '[]',
    entry_type TEXT NOT NULL DEFAULT '',
    bib_fields TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX papers_doi ON papers(doi) WHERE doi != '';
CREATE INDEX papers_arxiv_id ON papers(arxiv_id) WHERE arxiv_id != '';
CREATE INDEX papers_year ON papers(year);
CREATE INDEX papers_venue ON papers(venue COLLATE NOCASE);
CREATE TABLE paper_keywords (
    key INTEGER NOT NULL REFERENCES papers(key) ON DELETE CASCADE,
    keyword TEXT NOT NULL COLLATE NOCASE
);
CREATE INDEX paper_keywords_keyword ON paper_keywords(keyword, key);
CREATE INDEX paper_keywords_key ON paper_keywords(key);
CREATE TABLE paper_collections (
    key INTEGER NOT NULL REFERENCES papers(key) ON DELETE CASCADE,
    name TEXT NOT NULL
);
CREATE INDEX paper_collections_name ON paper_collections(name, key);
"""
#: What a store written before collections lacks: made when it is opened for writing
#: (a store is written only while its generation is staged), else read as empty.
_COLLECTIONS_TABLE = _SCHEMA[_SCHEMA.index("CREATE TABLE paper_collections"):]
_COLUMNS = (
    "key, id, title, title_derived, abstract, authors, keywords, venue, year, url, tldr, "
    "primary_area, doi, arxiv_id, collections, entry_type, bib_fields"
)
#: Columns a store written before DOIs, arXiv ids, collections and entry types (with
#: the other bibliographic fields, a JSON object {name: text}) were kept lacks,
#: with their empty value: read as that there, and added when such a store is copied
#: into a new generation to be written.
_LATER_COLUMNS = {"doi": "''", "arxiv_id": "''", "collections": "'[]'", "entry_type": "''",
                  "bib_fields": "'{}'"}
#: Each paper's library and file stamp (`Paper.library`, `Paper.file_stamp`), for the
#: papers that have either; made by the first `insert` of such a paper.
_ORIGINS_TABLE = (
    "CREATE TABLE paper_origins (key INTEGER PRIMARY KEY REFERENCES papers(key) "
    "ON DELETE CASCADE, library TEXT NOT NULL, file_stamp TEXT NOT NULL)",
    "CREATE INDEX paper_origins_library ON paper_origins(library COLLATE NOCASE, key)",
)
_IDENTIFIER_COLUMNS = ("doi", "arxiv_id")
_BATCH = 500  # stays under SQLite's limit on bound parameters per statement


def _row_to_paper(row: sqlite3.Row) -> Paper:
    return Paper(
        id=row["id"],
        title=row["title"],
        title_derived=bool(row["title_derived"]),
        abstract=row["abstract"],
        authors=tuple(json.loads(row["authors"])),
        keywords=tuple(json.loads(row["keywords"])),
        venue=row["venue"],
        year=row["year"],
        url=row["url"],
        tldr=row["tldr"],
        primary_area=row["primary_area"],
        doi=row["doi"],
        arxiv_id=row["arxiv_id"],
        collections=tuple(json.loads(row["collections"])),
        entry_type=row["entry_type"],
        bib_fields=bib_fields(json.loads(row["bib_fields"])),
        library=row["library"],
        file_stamp=row["file_stamp"],
    )


def _chunks(items: Sequence[object], size: int = _BATCH) -> Iterable[Sequence[object]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class PaperStore:
    """One SQLite file of papers; opened read-only unless it is being written."""

    def __init__(self, connection: sqlite3.Connection, *, writable: bool = False) -> None:
        self._db = connection
        self._db.row_factory = sqlite3.Row
        present = {row[1] for row in self._db.execute("PRAGMA table_info(papers)")}
        missing = [name for name in _LATER_COLUMNS if name not in present]
        tables = {row[0] for row in self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if writable:
            for name in missing:
                self._db.execute(f"ALTER TABLE papers ADD COLUMN {name} TEXT NOT NULL "
                                 f"DEFAULT {_LATER_COLUMNS[name]}")
            if "paper_collections" not in tables:
                self._db.executescript(_COLLECTIONS_TABLE)
            missing, tables = [], tables | {"paper_collections"}
        self._columns = ", ".join(f"{_LATER_COLUMNS[name]} AS {name}" if name in missing
                                  else name for name in _COLUMNS.split(", "))
        self._identifiers = not any(name in missing for name in _IDENTIFIER_COLUMNS)
        self._collections = "paper_collections" in tables
        self._origins = "paper_origins" in tables

    @property
    def _selected(self) -> str:
        """What a query of whole papers selects from: their columns, each paper's
        library and file stamp with them ('' where the store has none)."""
        if not self._origins:
            return f"{self._columns}, '' AS library, '' AS file_stamp FROM papers"
        return (f"{self._columns}, coalesce(library, '') AS library, coalesce(file_stamp, "
                "'') AS file_stamp FROM papers LEFT JOIN paper_origins USING (key)")

    @classmethod
    def create(cls, path: Path) -> PaperStore:
        """A new, empty store at `path` (which must not exist)."""
        db = sqlite3.connect(Path(path).absolute().as_uri(), uri=True)  # URIs attach too
        db.executescript(_SCHEMA)
        db.execute("PRAGMA foreign_keys = ON")
        return cls(db)

    @classmethod
    def open(cls, path: Path, *, writable: bool = False) -> PaperStore:
        """The store at `path`; read-only files are opened immutable (no locks, no journal)."""
        if writable:
            db = sqlite3.connect(path)
            db.execute("PRAGMA foreign_keys = ON")
        else:
            db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True,
                                 check_same_thread=False)
        return cls(db, writable=writable)

    @classmethod
    @contextmanager
    def transaction(cls, path: Path, *, create: bool = False) -> Iterator[PaperStore]:
        """The store at `path` (new if `create`) for writing; committed if the block ends
        cleanly, rolled back otherwise, closed either way."""
        store = cls.create(path) if create else cls.open(path, writable=True)
        try:
            yield store
            store._db.commit()
        finally:
            store.close()

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM papers").fetchone()[0])

    @property
    def has_identifiers(self) -> bool:
        """Whether the file has the doi and arxiv_id columns (a store written before them
        reads them as empty, and gains them when opened for writing)."""
        return self._identifiers

    def keys(self) -> NDArray[np.int64]:
        """Every key, ascending."""
        rows = self._db.execute("SELECT key FROM papers ORDER BY key").fetchall()
        return np.array([row[0] for row in rows], dtype=np.int64)

    def integrity(self) -> str:
        """SQLite's own check of the file: "ok", or what it found damaged."""
        try:
            return "; ".join(str(row[0]) for row in
                             self._db.execute("PRAGMA integrity_check").fetchall())
        except sqlite3.DatabaseError as exc:
            return str(exc)

    # -- writing ---------------------------------------------------------------------------
    def insert(self, keys: NDArray[np.int64], papers: Sequence[Paper]) -> None:
        """Store `papers` (ids must be new to this store) under `keys`, one each."""
        self._db.executemany(
            f"INSERT INTO papers ({_COLUMNS}) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(int(key), paper.id, paper.title, int(paper.title_derived), paper.abstract,
              json.dumps(list(paper.authors)), json.dumps(list(paper.keywords)),
              paper.venue, paper.year, paper.url, paper.tldr, paper.primary_area,
              paper.doi, paper.arxiv_id, json.dumps(list(paper.collections)),
              paper.entry_type, json.dumps(dict(paper.bib_fields)))
             for key, paper in zip(keys, papers)])
        self._db.executemany("INSERT INTO paper_keywords (key, keyword) VALUES (?, ?)",
                             [(int(key), keyword) for key, paper in zip(keys, papers)
                              for keyword in paper.keywords])
        self._db.executemany("INSERT INTO paper_collections (key, name) VALUES (?, ?)",
                             [(int(key), name) for key, paper in zip(keys, papers)
                              for name in collection_names(paper.collections)])
        origins = [(int(key), paper.library, paper.file_stamp) for key, paper in
                   zip(keys, papers) if paper.library or paper.file_stamp]
        if origins and not self._origins:
            for statement in _ORIGINS_TABLE:  # execute, not executescript: no commit
                self._db.execute(statement)
            self._origins = True
        if origins:
            self._db.executemany("INSERT INTO paper_origins (key, library, file_stamp) "
                                 "VALUES (?, ?, ?)", origins)

    def copy_papers(self, path: Path, deleted: NDArray[np.int64]) -> None:
        """Copy every paper of the store at `path` but those of the keys `deleted` into
        this new one, in SQLite: a merge of a million papers makes none of them a Python
        object (a 2.5M build whose two merges held them so peaked at 14.9 GB; a 1M
        build merging so, at 9.2 GB)."""
        source = PaperStore.open(path)
        try:
            columns, collections, origins = source._columns, source._collections, source._origins
        finally:
            source.close()
        self._db.execute("ATTACH DATABASE ? AS part",
                         (Path(path).absolute().as_uri() + "?mode=ro&immutable=1",))
        try:
            self._db.execute("CREATE TEMP TABLE gone (key INTEGER PRIMARY KEY)")
            self._db.executemany("INSERT INTO temp.gone VALUES (?)",
                                 [(int(key),) for key in deleted])
            kept = "WHERE key NOT IN (SELECT key FROM temp.gone)"
            self._db.execute(f"INSERT INTO main.papers ({_COLUMNS}) SELECT {columns} "
                             f"FROM part.papers {kept}")
            self._db.execute("INSERT INTO main.paper_keywords (key, keyword) SELECT key, "
                             f"keyword FROM part.paper_keywords {kept}")
            if collections:
                self._db.execute("INSERT INTO main.paper_collections (key, name) SELECT "
                                 f"key, name FROM part.paper_collections {kept}")
            if origins:
                if not self._origins:
                    for statement in _ORIGINS_TABLE:
                        self._db.execute(statement)
                    self._origins = True
                self._db.execute("INSERT INTO main.paper_origins (key, library, file_stamp) "
                                 f"SELECT key, library, file_stamp FROM part.paper_origins "
                                 f"{kept}")
            self._db.execute("DROP TABLE temp.gone")
            self._db.commit()  # DETACH needs no open transaction
        finally:
            self._db.execute("DETACH DATABASE part")

    def used_keys(self) -> int:
        """The highest key ever handed out in this store (AUTOINCREMENT's record, which
        outlives removed papers), or the highest key held; 0 when empty."""
        row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'papers'"
                               ).fetchone()
        held = self._db.execute("SELECT max(key) FROM papers").fetchone()[0]
        return max(int(row[0]) if row else 0, int(held or 0))

    # -- reading ---------------------------------------------------------------------------
    def held(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """Those of `keys` stored here, ascending."""
        found: list[int] = []
        for chunk in _chunks([int(key) for key in keys]):
            marks = ",".join("?" * len(chunk))
            found += [row[0] for row in
                      self._db.execute(f"SELECT key FROM papers WHERE key IN ({marks})", chunk)]
        return np.array(sorted(found), dtype=np.int64)

    def keys_of(self, ids: Iterable[str]) -> dict[str, int]:
        """Key of each id that is stored; unknown ids are absent from the result."""
        found: dict[str, int] = {}
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            for row in self._db.execute(f"SELECT id, key FROM papers WHERE id IN ({marks})",
                                        chunk):
                found[row["id"]] = int(row["key"])
        return found

    def keys_by_identifier(self, column: str, values: Iterable[str]
                           ) -> list[tuple[str, int]]:
        """(value, key) of every paper whose normalised DOI (`column` doi) or arXiv id
        (arxiv_id) is one of `values`, by key."""
        if column not in _IDENTIFIER_COLUMNS:
            raise ValueError(f"not an identifier column: {column}")
        found: list[tuple[str, int]] = []
        if not self._identifiers:
            return found
        for chunk in _chunks([value for value in values if value]):
            marks = ",".join("?" * len(chunk))
            query = f"SELECT {column}, key FROM papers WHERE {column} IN ({marks})"
            found += [(str(value), int(key)) for value, key in self._db.execute(query, chunk)]
        return sorted(found, key=lambda pair: pair[1])

    def papers(self, keys: Iterable[int]) -> dict[int, Paper]:
        """Papers by key, for the keys that are stored."""
        found: dict[int, Paper] = {}
        for chunk in _chunks([int(key) for key in keys]):
            marks = ",".join("?" * len(chunk))
            query = f"SELECT {self._selected} WHERE key IN ({marks})"
            for row in self._db.execute(query, chunk):
                found[int(row["key"])] = _row_to_paper(row)
        return found

    def titles(self) -> Iterable[tuple[int, str]]:
        """Every (key, title), by key: matching given papers by title reads no abstracts."""
        for row in self._db.execute("SELECT key, title FROM papers ORDER BY key"):
            yield int(row[0]), str(row[1] or "")

    def iter_papers(self) -> Iterable[tuple[int, Paper]]:
        """Every (key, paper), by key."""
        for row in self._db.execute(f"SELECT {self._selected} ORDER BY key"):
            yield int(row["key"]), _row_to_paper(row)

    def filter_keys(self, filters: Filters, *, min_key: int | None = None
                    ) -> NDArray[np.int64]:
        """Keys of the papers `filters` admits, ascending; from `min_key` on if given (the
        store knows no dates: its index turns `filters.added_after` into a key)."""
        clauses: list[str] = []
        args: list[object] = []
        if min_key is not None:
            clauses.append("key >= ?")
            args.append(min_key)
        if filters.year_min is not None:
            clauses.append("year >= ?")
            args.append(filters.year_min)
        if filters.year_max is not None:
            clauses.append("year <= ?")
            args.append(filters.year_max)
        if filters.venues:
            clauses.append(f"venue COLLATE NOCASE IN ({','.join('?' * len(filters.venues))})")
            args.extend(filters.venues)
        if filters.keywords:
            marks = ",".join("?" * len(filters.keywords))
            clauses.append(f"key IN (SELECT key FROM paper_keywords WHERE keyword IN ({marks}))")
            args.extend(filters.keywords)
        if filters.collections:
            if not self._collections:  # written before collections: none is in one
                return np.array([], dtype=np.int64)
            marks = ",".join("?" * len(filters.collections))
            clauses.append(f"key IN (SELECT key FROM paper_collections WHERE name IN ({marks}))")
            args.extend(name.casefold() for name in filters.collections)
        if filters.libraries:
            clauses.append(self._in_libraries(filters.libraries, args))
        where = " AND ".join(clauses) or "1"
        rows = self._db.execute(f"SELECT key FROM papers WHERE {where} ORDER BY key", args)
        return np.array([row[0] for row in rows], dtype=np.int64)

    def _in_libraries(self, names: Sequence[str], args: list[object]) -> str:
        """The clause admitting papers of the libraries `names` (a group's, case
        ignored; the user's own: every paper without a library), its values in `args`."""
        mine = any(is_my_library(name) for name in names)
        groups = [name for name in names if not is_my_library(name)]
        if not self._origins:  # no paper of this store has a library: all are the user's
            return "1" if mine else "0"
        parts = []
        if groups:
            parts.append("key IN (SELECT key FROM paper_origins WHERE library COLLATE "
                         f"NOCASE IN ({','.join('?' * len(groups))}))")
            args.extend(groups)
        if mine:
            parts.append("key NOT IN (SELECT key FROM paper_origins WHERE library != '')")
        return f"({' OR '.join(parts)})"
