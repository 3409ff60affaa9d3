"""A Zotero data directory for tests, written with Zotero's schema (Zotero 5 and later).

The DDL is ours, written from the table and column names Zotero's schema defines
(`resource/schema/userdata.sql` and the system tables `itemTypes`, `fields`,
`creatorTypes`): only the tables and columns the reader touches, plus a few it must
ignore. Like Zotero, the database runs in WAL mode, and a `ZoteroWriter` keeps its
connection open with automatic checkpoints off, so that what it writes stays in
`zotero.sqlite-wal` until `checkpoint()`: the state a library is in while Zotero runs.
"""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

__all__ = ["ZoteroWriter"]

_SCHEMA = """
CREATE TABLE version (schema TEXT PRIMARY KEY, version INT NOT NULL);
CREATE TABLE libraries (libraryID INTEGER PRIMARY KEY, type TEXT NOT NULL,
    editable INT NOT NULL, filesEditable INT NOT NULL, version INT NOT NULL DEFAULT 0,
    storageVersion INT NOT NULL DEFAULT 0, lastSync INT NOT NULL DEFAULT 0,
    archived INT NOT NULL DEFAULT 0);
CREATE TABLE groups (groupID INTEGER PRIMARY KEY, libraryID INT NOT NULL UNIQUE,
    name TEXT NOT NULL, description TEXT NOT NULL, version INT NOT NULL);
CREATE TABLE feeds (libraryID INTEGER PRIMARY KEY, name TEXT NOT NULL, url TEXT NOT NULL);
CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT,
    templateItemTypeID INT, display INT DEFAULT 1);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE creatorTypes (creatorTypeID INTEGER PRIMARY KEY, creatorType TEXT);
CREATE TABLE items (itemID INTEGER PRIMARY KEY, itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE);
CREATE TABLE itemData (itemID INT, fieldID INT, valueID, PRIMARY KEY (itemID, fieldID));
CREATE TABLE itemNotes (itemID INTEGER PRIMARY KEY, parentItemID INT, note TEXT, title TEXT);
CREATE TABLE itemAttachments (itemID INTEGER PRIMARY KEY, parentItemID INT, linkMode INT,
    contentType TEXT, charsetID INT, path TEXT, syncState INT DEFAULT 0,
    storageModTime INT, storageHash TEXT, lastProcessedModificationTime INT);
CREATE TABLE itemAnnotations (itemID INTEGER PRIMARY KEY, parentItemID INT NOT NULL,
    type INTEGER NOT NULL, text TEXT);
CREATE TABLE tags (tagID INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE itemTags (itemID INT NOT NULL, tagID INT NOT NULL, type INT NOT NULL,
    PRIMARY KEY (itemID, tagID));
CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT,
    fieldMode INT, UNIQUE (lastName, firstName, fieldMode));
CREATE TABLE itemCreators (itemID INT NOT NULL, creatorID INT NOT NULL,
    creatorTypeID INT NOT NULL DEFAULT 1, orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex), UNIQUE (itemID, orderIndex));
CREATE TABLE collections (collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL,
    parentCollectionID INT DEFAULT NULL,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE collectionItems (collectionID INT NOT NULL, itemID INT NOT NULL,
    orderIndex INT NOT NULL DEFAULT 0, PRIMARY KEY (collectionID, itemID));
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY,
    dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
CREATE TABLE deletedCollections (collectionID INTEGER PRIMARY KEY,
    dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
CREATE TABLE fulltextItems (itemID INTEGER PRIMARY KEY, indexedPages INT, totalPages INT,
    indexedChars INT, totalChars INT, version INT NOT NULL DEFAULT 0,
    synced INT NOT NULL DEFAULT 0);
"""
_TYPES = ("journalArticle", "conferencePaper", "preprint", "book", "bookSection", "thesis",
          "report", "webpage", "note", "attachment", "annotation")
_CREATOR_TYPES = ("author", "editor", "contributor")
_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"  # Zotero's key alphabet


class ZoteroWriter:
    """Writes a Zotero library into `folder` as Zotero would, through one open
    connection (the WAL holds every write until `checkpoint`)."""

    USER = 1

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.database = folder / "zotero.sqlite"
        self.db = sqlite3.connect(self.database, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA wal_autocheckpoint = 0")
        self.db.executescript(_SCHEMA)
        self.db.executemany("INSERT INTO itemTypes (itemTypeID, typeName) VALUES (?, ?)",
                            enumerate(_TYPES, 1))
        self.db.executemany("INSERT INTO creatorTypes VALUES (?, ?)",
                            enumerate(_CREATOR_TYPES, 1))
        self.db.execute("INSERT INTO libraries (libraryID, type, editable, filesEditable) "
                        "VALUES (1, 'user', 1, 1)")
        self._keys = (self._key(n) for n in itertools.count(10**9, 7919))

    @staticmethod
    def _key(number: int) -> str:
        digits = []
        for _ in range(8):
            number, rest = divmod(number, len(_ALPHABET))
            digits.append(_ALPHABET[rest])
        return "".join(reversed(digits))

    def _value(self, table: str, column: str, value: str, id_column: str) -> int:
        row = self.db.execute(f"SELECT {id_column} FROM {table} WHERE {column} = ?",
                              (value,)).fetchone()
        if row:
            return int(row[0])
        return int(self.db.execute(f"INSERT INTO {table} ({column}) VALUES (?)",
                                   (value,)).lastrowid or 0)

    def group(self, name: str, group_id: int) -> int:
        """A group library; its libraryID."""
        library = int(self.db.execute("INSERT INTO libraries (type, editable, filesEditable) "
                                      "VALUES ('group', 1, 1)").lastrowid or 0)
        self.db.execute("INSERT INTO groups VALUES (?, ?, ?, '', 0)", (group_id, library, name))
        return library

    def leave(self, library: int) -> None:
        """The user leaves a group: Zotero deletes the library, its group and its items."""
        for table in ("groups", "libraries"):
            self.db.execute(f"DELETE FROM {table} WHERE libraryID = ?", (library,))
        for (item,) in self.db.execute("SELECT itemID FROM items WHERE libraryID = ?",
                                       (library,)).fetchall():
            self.delete(item)

    def feed(self, name: str) -> int:
        library = int(self.db.execute("INSERT INTO libraries (type, editable, filesEditable) "
                                      "VALUES ('feed', 1, 1)").lastrowid or 0)
        self.db.execute("INSERT INTO feeds VALUES (?, ?, ?)", (library, name, f"https://{name}"))
        return library

    def collection(self, name: str, parent: int | None = None, library: int = USER) -> int:
        return int(self.db.execute(
            "INSERT INTO collections (collectionName, parentCollectionID, libraryID, key) "
            "VALUES (?, ?, ?, ?)", (name, parent, library, next(self._keys))).lastrowid or 0)

    def item(self, item_type: str = "journalArticle", *, library: int = USER,
             fields: dict[str, str] | None = None, creators: list[tuple[str, str]] = (),
             editors: list[tuple[str, str]] = (), tags: list[str] = (),
             collections: list[int] = (), parent: int | None = None,
             key: str | None = None) -> tuple[int, str]:
        """An item: (itemID, key). Creators as (first, last); ("", name) is one field.
        `key`: the item's key (Zotero's keys are unique within a library only)."""
        key = key or next(self._keys)
        item = int(self.db.execute(
            "INSERT INTO items (itemTypeID, libraryID, key, dateModified) VALUES "
            "((SELECT itemTypeID FROM itemTypes WHERE typeName = ?), ?, ?, "
            "'2026-01-01 00:00:00')", (item_type, library, key)).lastrowid or 0)
        for name, value in (fields or {}).items():
            self.set_field(item, name, value)
        people = [(p, 1) for p in creators] + [(p, 2) for p in editors]
        for order, ((first, last), role) in enumerate(people):
            mode = 1 if not first else 0
            self.db.execute("INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) "
                            "VALUES (?, ?, ?)", (first, last, mode))
            creator = self.db.execute("SELECT creatorID FROM creators WHERE firstName = ? "
                                      "AND lastName = ? AND fieldMode = ?",
                                      (first, last, mode)).fetchone()[0]
            self.db.execute("INSERT INTO itemCreators VALUES (?, ?, ?, ?)",
                            (item, creator, role, order))
        for tag in tags:
            tag_id = self._value("tags", "name", tag, "tagID")
            self.db.execute("INSERT INTO itemTags VALUES (?, ?, 0)", (item, tag_id))
        for collection in collections:
            self.db.execute("INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)",
                            (collection, item))
        if item_type == "note":
            self.db.execute("INSERT INTO itemNotes VALUES (?, ?, '<p>a note</p>', 'a note')",
                            (item, parent))
        return item, key

    def set_field(self, item: int, name: str, value: str) -> None:
        field = self._value("fields", "fieldName", name, "fieldID")
        value_id = self._value("itemDataValues", "value", value, "valueID")
        self.db.execute("INSERT OR REPLACE INTO itemData VALUES (?, ?, ?)",
                        (item, field, value_id))
        self.db.execute("UPDATE items SET dateModified = datetime('now'), "
                        "version = version + 1 WHERE itemID = ?", (item,))

    def pdf(self, parent: int, content: bytes, name: str = "paper.pdf", *,
            linked: Path | None = None, library: int = USER) -> int:
        """A PDF attachment of `parent`: stored in storage/KEY/ (as Zotero imports
        files), or linked at `linked`."""
        return self.attachment(parent, content, name, linked=linked, library=library)

    def attachment(self, parent: int, content: bytes | None, name: str, *,
                   content_type: str = "application/pdf", linked: Path | None = None,
                   library: int = USER) -> int:
        """An attachment of `parent` of `content_type`: stored in storage/KEY/, or linked
        at `linked`; its file not here (a file Zotero has not downloaded) when `content`
        is None."""
        item, key = self.item("attachment", library=library)
        if linked is None:
            folder = self.folder / "storage" / key
            folder.mkdir(parents=True, exist_ok=True)
            if content is not None:
                (folder / name).write_bytes(content)
            mode, path = (0 if content_type != "text/html" else 1), f"storage:{name}"
        else:
            if content is not None:
                linked.write_bytes(content)
            mode, path = 2, str(linked)
        self.db.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, "
                        "contentType, path) VALUES (?, ?, ?, ?, ?)",
                        (item, parent, mode, content_type, path))
        return item

    def key_of(self, item: int) -> str:
        return str(self.db.execute("SELECT key FROM items WHERE itemID = ?",
                                   (item,)).fetchone()[0])

    def ft_cache(self, attachment: int, text: str, *, pages: tuple[int, int] | None = None,
                 chars: tuple[int, int] | None = None) -> Path:
        """Zotero's full-text cache of `attachment`: `text` in storage/KEY/.zotero-ft-cache
        (where Zotero writes it for a linked file too), and its `fulltextItems` row:
        (indexed, total) pages of a PDF or characters of a text."""
        folder = self.folder / "storage" / self.key_of(attachment)
        folder.mkdir(parents=True, exist_ok=True)
        cache = folder / ".zotero-ft-cache"
        cache.write_text(text, encoding="utf-8")
        indexed_pages, total_pages = pages or (None, None)
        indexed_chars, total_chars = chars or (None, None)
        self.db.execute("INSERT OR REPLACE INTO fulltextItems (itemID, indexedPages, "
                        "totalPages, indexedChars, totalChars) VALUES (?, ?, ?, ?, ?)",
                        (attachment, indexed_pages, total_pages, indexed_chars, total_chars))
        return cache

    def trash(self, item: int) -> None:
        self.db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item,))

    def delete(self, item: int) -> None:
        for table in ("itemData", "itemCreators", "itemTags", "collectionItems",
                      "deletedItems", "items"):
            self.db.execute(f"DELETE FROM {table} WHERE itemID = ?", (item,))

    def checkpoint(self) -> None:
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.db.close()
