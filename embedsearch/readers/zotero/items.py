"""Zotero items as papers: which items are papers, which are chosen, and their fields.

A regular item (journal article, conference paper, preprint, book, thesis, ...) is a
paper; notes, attachments and annotations are not, nor is anything in the trash. Its
fields map as: `title` (or a case's, an act's name), `abstractNote`, the creators
(authors, else every creator), the year of `date`, the venue (publication, proceedings,
conference, book, website or repository title, university, institution), `DOI`
(also from `extra`, where Zotero keeps it for types without the field), `url`, an
arXiv id (from `archiveID`, `extra` or the URL), tags as keywords, and the collections
the item is in. Its item type becomes a BibTeX entry type (`bibentry.ZOTERO_TYPES`), and
the fields the exports write back are kept (`_KEPT`: volume, issue, pages, publisher,
place, series, ISBN, ISSN, a thesis's or report's type; and the editors). Its id is
`zotero:KEY` (`zotero:groups/ID/KEY` in a group library), stable for the item's life and
the same on every synced computer, and unique across the libraries of a data directory
(Zotero's keys are unique within a library only). A group library's item knows its
library by the group's name (`Paper.library`); the user's own is "".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import InputError
from ...filters import COLLECTION_SEPARATOR, collection_names
from ...text.bibentry import ZOTERO_TYPES, bib_fields, page_range
from ...text.identifiers import normalise_arxiv_id, normalise_doi
from ..foreign import collapse, doi_url
from .fulltext import CACHE_FILE, READ_TYPES, Attachment
from .tables import AttachmentRow, Indexed, Library, Row, Tables

__all__ = ["Selection", "ZoteroItem", "id_prefix", "item_id", "select_items"]

_NOT_PAPERS = {"note": "a note, not a paper", "attachment": "an attachment, not a paper",
               "annotation": "an annotation, not a paper"}
_TITLE_FIELDS = ("title", "caseName", "nameOfAct", "subject")
_VENUE_FIELDS = ("publicationTitle", "proceedingsTitle", "conferenceName", "bookTitle",
                 "websiteTitle", "blogTitle", "forumTitle", "encyclopediaTitle",
                 "dictionaryTitle", "programTitle", "repository", "university", "institution")
#: Zotero's fields (its schema's names) under the BibTeX names `bibentry` keeps.
_KEPT = {"volume": "volume", "issue": "number", "reportNumber": "number", "pages": "pages",
         "edition": "edition", "publisher": "publisher", "place": "address",
         "series": "series", "ISBN": "isbn", "ISSN": "issn", "thesisType": "type",
         "reportType": "type"}
_SQL_DATE = re.compile(r"^(\d{4})-\d{2}-\d{2}")
_ANY_YEAR = re.compile(r"(?<![0-9])([0-9]{4})(?![0-9])")
_EXTRA_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z .-]*?)\s*:\s*(.+?)\s*$", re.MULTILINE)
# Attachment link modes (Zotero.Attachments.LINK_MODE_*): files Zotero stores itself in
# storage/KEY/, and files linked where the user keeps them.
_STORED = (0, 1)
_LINKED = 2
_PDF = "application/pdf"


@dataclass(frozen=True)
class Selection:
    """Which items to read: one library (None: the user's own, else a group's name) or
    `every` library (the user's and each group's), within a collection (with its
    sub-collections) and with a tag when given."""

    group: str | None = None
    collection: str | None = None
    tag: str | None = None
    every: bool = False


@dataclass(frozen=True)
class ZoteroItem:
    """One regular item, as our record layout (see `records.paper_from_record`), with
    its PDF files (where an abstract may be found) and the attachments that may be read
    in full (`fulltext`). (A sync tells a changed item by comparing its paper with the
    stored one, which Zotero's modification time would not make cheaper.)"""

    key: str
    record: dict[str, object]
    pdfs: tuple[Path, ...]
    attachments: tuple[Attachment, ...] = ()


def _year(date: str) -> int | None:
    """The year of a Zotero date: stored as "2020-05-00 May 2020" (SQL date first,
    0000 when unknown), or free text for dates Zotero could not parse."""
    match = _SQL_DATE.match(date) or _ANY_YEAR.search(date)
    year = int(match.group(1)) if match else 0
    return year if 1000 <= year <= 9999 else None


def _name(first: str, last: str, mode: int) -> str:
    return collapse(last if mode == 1 else f"{first} {last}")  # 1: a single-field name


def _authors(row: Row) -> list[str]:
    authors = [_name(f, la, m) for f, la, m, role in row.creators if role == "author"]
    return authors or [_name(f, la, m) for f, la, m, _ in row.creators]


def _entry_type(row: Row) -> str:
    """The item's BibTeX entry type; a thesis whose type says master's is one."""
    kind = ZOTERO_TYPES.get(row.item_type, "misc")
    if kind == "phdthesis" and "master" in row.fields.get("thesisType", "").lower():
        return "mastersthesis"
    return kind


def _kept(row: Row) -> dict[str, str]:
    """The item's other bibliographic fields under their BibTeX names; editors as
    "First Last and First Last", as the other readers keep them."""
    found = {name: row.fields[field] for field, name in _KEPT.items() if row.fields.get(field)}
    if "pages" in found:
        found["pages"] = page_range(found["pages"])
    found["editor"] = " and ".join(_name(f, la, m) for f, la, m, role in row.creators
                                   if role == "editor")
    return dict(bib_fields(found))


def _extra(text: str) -> dict[str, str]:
    """The "Key: value" lines of `extra` (Zotero's place for fields a type lacks)."""
    return {match.group(1).strip().lower(): match.group(2)
            for match in _EXTRA_LINE.finditer(text)}


def _identifiers(fields: dict[str, str]) -> tuple[str, str]:
    extra = _extra(fields.get("extra", ""))
    doi = normalise_doi(fields.get("DOI", "")) or normalise_doi(extra.get("doi", ""))
    arxiv = ""
    for text in (fields.get("archiveID", ""), extra.get("arxiv", ""),
                 fields.get("url", ""), fields.get("archiveLocation", "")):
        arxiv = normalise_arxiv_id(text.removeprefix("arXiv:").strip()) if text else ""
        if arxiv:
            break
    return doi, arxiv


def _paths(tables: Tables) -> dict[int, str]:
    """Each collection's path from the top ("Thesis/Methods")."""
    paths: dict[int, str] = {}
    for cid in tables.collections:
        parts: list[str] = []
        seen: set[int] = set()
        at: int | None = cid
        while at is not None and at in tables.collections and at not in seen:
            seen.add(at)
            name, parent, _ = tables.collections[at]
            parts.append(name.replace(COLLECTION_SEPARATOR, " "))
            at = parent
        paths[cid] = COLLECTION_SEPARATOR.join(reversed(parts))
    return paths


def _resolve(attachment: AttachmentRow, data_dir: Path, base: Path | None) -> Path | None:
    if attachment.link_mode in _STORED and attachment.path.startswith("storage:"):
        return data_dir / "storage" / attachment.key / attachment.path[len("storage:"):]
    if attachment.link_mode == _LINKED:
        if attachment.path.startswith("attachments:"):
            return base / attachment.path[len("attachments:"):] if base else None
        return Path(attachment.path) if attachment.path else None
    return None


def _pdfs(row: Row, tables: Tables, data_dir: Path, base: Path | None) -> tuple[Path, ...]:
    found = [_resolve(a, data_dir, base) for a in tables.attachments.get(row.item_id, [])
             if a.content_type == _PDF and not a.trashed]
    return tuple(path for path in found if path is not None and path.is_file())


def _readable(row: Row, tables: Tables, data_dir: Path, base: Path | None
              ) -> tuple[Attachment, ...]:
    """The item's attachments of a type read in full, oldest first, each with where
    Zotero caches its text (its own storage folder, a linked file's too)."""
    return tuple(
        Attachment(a.key, _resolve(a, data_dir, base), a.content_type,
                   data_dir / "storage" / a.key / CACHE_FILE,
                   tables.indexed.get(a.item_id, Indexed()))
        for a in sorted(tables.attachments.get(row.item_id, []), key=lambda a: a.item_id)
        if a.content_type in READ_TYPES and not a.trashed)


def id_prefix(library: Library) -> str:
    """What the paper ids of a library's items start with: `zotero:` in the user's own,
    `zotero:groups/ID/` in a group's (after Zotero's own URIs)."""
    return "zotero:" if library.group_id is None else f"zotero:groups/{library.group_id}/"


def item_id(row: Row, library: Library) -> str:
    """The paper id of an item: `zotero:KEY`, or `zotero:groups/ID/KEY` in a group."""
    return id_prefix(library) + row.key


def _record(row: Row, library: Library, paths: dict[int, str]) -> dict[str, object]:
    fields = row.fields
    doi, arxiv = _identifiers(fields)
    title = next((fields[name] for name in _TITLE_FIELDS if fields.get(name)), "")
    return {
        "id": item_id(row, library),
        "title": collapse(title),
        "abstract": fields.get("abstractNote", "").strip(),
        "authors": [name for name in _authors(row) if name],
        "year": _year(fields.get("date", "")),
        "venue": collapse(next((fields[n] for n in _VENUE_FIELDS if fields.get(n)), "")),
        "url": fields.get("url", "").strip() or (doi_url(doi) if doi else ""),
        "doi": doi,
        "arxiv_id": arxiv,
        "keywords": list(dict.fromkeys(tag.strip() for tag in row.tags if tag.strip())),
        "collections": sorted({paths[c] for c in row.collections if c in paths}),
        "entry_type": _entry_type(row),
        "bib_fields": _kept(row),
        # "" for the user's own (My Library): a paper of a single library's index is
        # what it was before papers knew their library.
        "library": library.name if library.group_id is not None else "",
    }


def _libraries(tables: Tables, selection: Selection, database: Path) -> list[Library]:
    """The libraries `selection` reads: every one (the user's first), a group's, or the
    user's own."""
    if selection.every:
        return sorted(tables.libraries.values(),
                      key=lambda lib: (lib.group_id is not None, lib.library_id))
    group = selection.group
    if group is None:
        return [next(lib for lib in tables.libraries.values() if lib.group_id is None)]
    for library in tables.libraries.values():
        if library.group_id is not None and library.name.casefold() == group.casefold():
            return [library]
    names = sorted(lib.name for lib in tables.libraries.values() if lib.group_id is not None)
    raise InputError(f"no group library named {group!r} (there are: "
                     f"{', '.join(names) or 'none'})", path=database)


def _check_choice(kind: str, wanted: str, known: set[str], database: Path,
                  matched: set[str] | None = None) -> None:
    """Refuse a `wanted` name that matches none of `matched` (case folded; default the
    `known` names), listing the `known` ones."""
    if matched is None:
        matched = {name.casefold() for name in known}
    if wanted.casefold() not in matched:
        shown = ", ".join(sorted(known)[:10]) + (" ..." if len(known) > 10 else "")
        raise InputError(f"no {kind} {wanted!r} in this library (there are: "
                         f"{shown or 'none'})", path=database)


def select_items(tables: Tables, selection: Selection, database: Path, data_dir: Path,
                 base: Path | None
                 ) -> tuple[list[Library], list[ZoteroItem], list[tuple[str, str, str]]]:
    """The chosen libraries, their chosen regular items, and (id, label, reason) of each
    chosen item that is not a paper (a note, an attachment, in the trash), so a report
    accounts for every one. A collection or tag of several libraries is any library's
    of that name.

    Raises:
        InputError: an unknown group, collection or tag, naming those there are.
    """
    chosen = {library.library_id: library for library in
              _libraries(tables, selection, database)}
    paths = _paths(tables)
    rows = [row for row in tables.items.values() if row.library_id in chosen]
    tags = {tag for row in rows for tag in row.tags}
    if selection.collection:
        in_library = {paths[c] for c, (_, _, lib) in tables.collections.items()
                      if lib in chosen}
        wanted = COLLECTION_SEPARATOR.join(p.strip() for p in
                                           selection.collection.split(COLLECTION_SEPARATOR))
        _check_choice("collection", wanted, in_library, database,
                      set(collection_names(in_library)))
        rows = [row for row in rows if wanted.casefold() in collection_names(
            paths[c] for c in row.collections if c in paths)]
    if selection.tag:
        _check_choice("tag", selection.tag, tags, database)
        rows = [row for row in rows if selection.tag.casefold() in
                {tag.casefold() for tag in row.tags}]
    items, passed = [], []
    for row in rows:
        library = chosen[row.library_id]
        name = item_id(row, library)
        if row.item_type in _NOT_PAPERS:
            passed.append((name, row.key, _NOT_PAPERS[row.item_type]))
        elif row.trashed:
            passed.append((name, row.key, "in the trash"))
        else:
            items.append(ZoteroItem(row.key, _record(row, library, paths),
                                    _pdfs(row, tables, data_dir, base),
                                    _readable(row, tables, data_dir, base)))
    return list(chosen.values()), items, passed
