"""What a Zotero database holds, read table by table into plain rows.

The table and column names are those of Zotero's schema (`resource/schema/userdata.sql`
in Zotero's repository; Zotero 5 and later): `items`, `itemData` with `itemDataValues`
and `fields`, `itemCreators` with `creators` and `creatorTypes`, `itemTags` with
`tags`, `collections` with `collectionItems`, `itemAttachments`, `deletedItems` (the
trash), `libraries` and `groups`, and `fulltextItems` (how much of each attachment
Zotero's full-text cache holds). Every query here only reads.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError

__all__ = ["AttachmentRow", "Indexed", "Library", "Row", "Tables", "read_tables"]


@dataclass(frozen=True)
class Library:
    """One library of the database: the user's own ("My Library") or a group's."""

    library_id: int
    name: str
    group_id: int | None = None


@dataclass
class Row:
    """One item as the database has it."""

    item_id: int
    key: str
    library_id: int
    item_type: str
    trashed: bool
    fields: dict[str, str] = field(default_factory=dict)
    creators: list[tuple[str, str, int, str]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    collections: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class AttachmentRow:
    item_id: int
    key: str
    parent_id: int | None
    link_mode: int
    content_type: str
    path: str
    trashed: bool


@dataclass(frozen=True)
class Indexed:
    """How much of an attachment Zotero's full-text cache holds (`fulltextItems`): pages
    of a PDF, characters of a text (EPUB, HTML); None where Zotero did not say."""

    pages: int | None = None
    total_pages: int | None = None
    chars: int | None = None
    total_chars: int | None = None

    @property
    def partial(self) -> bool:
        """Whether Zotero says it cached only part (its page or character limit)."""
        return any(done is not None and total is not None and done < total
                   for done, total in ((self.pages, self.total_pages),
                                       (self.chars, self.total_chars)))


@dataclass
class Tables:
    """The rows of a whole database, keyed for the mapping to papers."""

    libraries: dict[int, Library]
    items: dict[int, Row]
    #: collectionID -> (name, parent collectionID, libraryID), trashed ones left out.
    collections: dict[int, tuple[str, int | None, int]]
    attachments: dict[int, list[AttachmentRow]]  # by parent itemID
    #: What Zotero's full-text cache holds of each attachment, by its itemID.
    indexed: dict[int, Indexed] = field(default_factory=dict)


def _table_names(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master "
                                         "WHERE type IN ('table', 'view')")}


def _check_schema(db: sqlite3.Connection, names: set[str], database: Path) -> None:
    needed = {"items", "itemData", "itemDataValues", "libraries", "itemCreators", "creators",
              "itemTags", "tags", "collections", "collectionItems", "itemAttachments",
              "deletedItems"}
    missing = sorted(needed - names)
    if missing:
        raise InputError(f"not a Zotero database: it lacks the tables {', '.join(missing)}",
                         path=database)
    columns = {row[1] for row in db.execute("PRAGMA table_info(libraries)")}
    if "type" not in columns:
        raise InputError("a Zotero database older than Zotero 5; open it once in a current "
                         "Zotero, which upgrades it", path=database)


def _libraries(db: sqlite3.Connection, names: set[str]) -> dict[int, Library]:
    groups = {}
    if "groups" in names:
        groups = {int(row[0]): (int(row[1]), str(row[2]))
                  for row in db.execute("SELECT libraryID, groupID, name FROM groups")}
    found: dict[int, Library] = {}
    for library_id, kind in db.execute("SELECT libraryID, type FROM libraries"):
        if kind == "user":
            found[int(library_id)] = Library(int(library_id), "My Library")
        elif kind == "group" and library_id in groups:
            group_id, name = groups[library_id]
            found[int(library_id)] = Library(int(library_id), name, group_id)
    return found  # feeds are not the user's papers


def _items(db: sqlite3.Connection, names: set[str], libraries: dict[int, Library]
           ) -> dict[int, Row]:
    types = "itemTypesCombined" if "itemTypesCombined" in names else "itemTypes"
    rows = db.execute(
        f"SELECT i.itemID, i.key, i.libraryID, t.typeName, d.itemID IS NOT NULL "
        f"FROM items i JOIN {types} t ON t.itemTypeID = i.itemTypeID "
        f"LEFT JOIN deletedItems d ON d.itemID = i.itemID ORDER BY i.itemID")
    return {int(r[0]): Row(int(r[0]), str(r[1]), int(r[2]), str(r[3]), bool(r[4]))
            for r in rows if int(r[2]) in libraries}


def _fill(db: sqlite3.Connection, names: set[str], items: dict[int, Row]) -> None:
    fields = "fieldsCombined" if "fieldsCombined" in names else "fields"
    for item_id, name, value in db.execute(
            f"SELECT d.itemID, f.fieldName, v.value FROM itemData d "
            f"JOIN {fields} f ON f.fieldID = d.fieldID "
            f"JOIN itemDataValues v ON v.valueID = d.valueID"):
        if item_id in items and value is not None:
            items[item_id].fields[str(name)] = str(value)
    for item_id, first, last, mode, role in db.execute(
            "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, ct.creatorType "
            "FROM itemCreators ic JOIN creators c ON c.creatorID = ic.creatorID "
            "JOIN creatorTypes ct ON ct.creatorTypeID = ic.creatorTypeID "
            "ORDER BY ic.itemID, ic.orderIndex"):
        if item_id in items:
            items[item_id].creators.append((str(first or ""), str(last or ""),
                                            int(mode or 0), str(role)))
    for item_id, name in db.execute("SELECT it.itemID, t.name FROM itemTags it "
                                     "JOIN tags t ON t.tagID = it.tagID ORDER BY t.name"):
        if item_id in items:
            items[item_id].tags.append(str(name))
    for collection_id, item_id in db.execute("SELECT collectionID, itemID FROM "
                                             "collectionItems ORDER BY collectionID"):
        if item_id in items:
            items[item_id].collections.append(int(collection_id))


def _collections(db: sqlite3.Connection, names: set[str]
                 ) -> dict[int, tuple[str, int | None, int]]:
    trashed: set[int] = set()
    if "deletedCollections" in names:
        trashed = {int(row[0]) for row in db.execute("SELECT collectionID FROM "
                                                     "deletedCollections")}
    return {int(cid): (str(name), None if parent is None else int(parent), int(library))
            for cid, name, parent, library in db.execute(
                "SELECT collectionID, collectionName, parentCollectionID, libraryID "
                "FROM collections") if int(cid) not in trashed}


def _attachments(db: sqlite3.Connection) -> dict[int, list[AttachmentRow]]:
    found: dict[int, list[AttachmentRow]] = defaultdict(list)
    for item_id, key, parent, mode, kind, path, trashed in db.execute(
            "SELECT a.itemID, i.key, a.parentItemID, a.linkMode, a.contentType, a.path, "
            "d.itemID IS NOT NULL FROM itemAttachments a JOIN items i ON i.itemID = "
            "a.itemID LEFT JOIN deletedItems d ON d.itemID = a.itemID"):
        if parent is not None:
            found[int(parent)].append(AttachmentRow(int(item_id), str(key), int(parent),
                                                    int(mode or 0), str(kind or ""),
                                                    str(path or ""), bool(trashed)))
    return found


def _indexed(db: sqlite3.Connection, names: set[str]) -> dict[int, Indexed]:
    if "fulltextItems" not in names:
        return {}
    columns = {row[1] for row in db.execute("PRAGMA table_info(fulltextItems)")}
    wanted = ("indexedPages", "totalPages", "indexedChars", "totalChars")
    chosen = ", ".join(name if name in columns else "NULL" for name in wanted)

    def number(value: object) -> int | None:
        return int(value) if isinstance(value, (int, float)) else None

    return {int(row[0]): Indexed(*(number(value) for value in row[1:]))
            for row in db.execute(f"SELECT itemID, {chosen} FROM fulltextItems")}


def read_tables(db: sqlite3.Connection, database: Path) -> Tables:
    """Every item of the user's and the groups' libraries, with its fields, creators,
    tags, collections and attachments, and what Zotero's full-text cache holds of each
    attachment (feeds are left out).

    Raises:
        InputError: the database is not Zotero's, or older than Zotero 5.
    """
    names = _table_names(db)
    _check_schema(db, names, database)
    libraries = _libraries(db, names)
    items = _items(db, names, libraries)
    _fill(db, names, items)
    return Tables(libraries, items, _collections(db, names), _attachments(db),
                  _indexed(db, names))
