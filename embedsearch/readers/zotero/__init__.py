"""A Zotero library read in place: the papers of a local `zotero.sqlite`, safely while
Zotero runs, without an export.

`ZoteroLibrary` names a library (its data directory, else Zotero's own default) and
what to read of it (a group library, a collection with its sub-collections, a tag).
Reading takes a consistent snapshot of the database with its write-ahead log and never
writes to it (see `snapshot`); items become papers as `items` describes, an item
without an abstract takes one from its PDF when it has a stored PDF that gives one, and
each item's attachment is read in full (`fulltext`: Zotero's own cache of its text, else
the PDF) unless `full_text` is off. `every_library` reads My Library and each group
library into one index, each paper knowing its library (`Paper.library`).
Anything in the reading list may name a library as `zotero:[DATA_DIR][?collection=
NAME&tag=TAG&group=NAME]` (`libraries=all` for every library), and a `zotero.sqlite`
file is read as its library.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs

from ...errors import InputError
from ...papers import Paper
from ..base import Located, Skipped, SourceState, register_format
from ..pdf import PdfExtraction, extract_pdf, report_note
from ..records import paper_from_record
from .fulltext import Attachment, Body, chosen_attachment, read_body, stamp
from .items import Selection, ZoteroItem, id_prefix, select_items
from .location import DATABASE, data_directory, preference, profile_prefs
from .snapshot import snapshot
from .tables import read_tables

__all__ = ["ZoteroItem", "ZoteroLibrary", "ZoteroReading", "as_library", "item_paper",
           "pdf_abstract", "read_zotero"]

_SELECTORS = ("collection", "tag", "group", "libraries")
#: The value of the `libraries` selector that reads every library.
_EVERY = "all"


@dataclass(frozen=True)
class ZoteroReading:
    """One snapshot of a library: the chosen regular items, and the chosen items that
    are not papers, as `Skipped` (a note, an attachment, in the trash)."""

    database: Path
    items: list[ZoteroItem]
    passed: list[Skipped]
    #: What the ids of the library's papers start with ("zotero:", "zotero:groups/7/").
    id_prefix: str
    #: Whether every library was read: then every id under `id_prefix` (a group's too,
    #: one the user has left) is the reading's own.
    every_library: bool = False

    def owns(self, paper_id: str) -> bool:
        """Whether `paper_id` is of what was read (an item of it, or one it lost)."""
        rest = paper_id[len(self.id_prefix):]
        return paper_id.startswith(self.id_prefix) and (self.every_library or "/" not in rest)


@dataclass(frozen=True)
class ZoteroLibrary:
    """A local Zotero library to read papers from, read-only, while Zotero runs or not.

    Args:
        data_dir: Zotero's data directory (the folder holding zotero.sqlite, or that
            file); None: the one Zotero's preferences name, else `~/Zotero`.
        collection: only items in this collection or its sub-collections, named by its
            path ("Thesis/Methods") or its own name.
        tag: only items with this tag.
        group: a group library, by name, instead of the user's own.
        every_library: My Library and every group library, into one index: each paper
            knows its library (`Paper.library`: the group's name, "" for My Library),
            and ids stay apart (`zotero:KEY`, `zotero:groups/ID/KEY`).
        pdf_abstracts: give an item without an abstract the one its stored PDF holds.
        full_text: read each item's attachment in full, as passages with their pages
            (Zotero's full-text cache of it where there is one, else its PDF); off, an
            item is its record (and a PDF's abstract), as before full text.

    Example:
        ```python
        from embedsearch import ZoteroLibrary, read_papers

        papers = read_papers([ZoteroLibrary(collection="Thesis")], title_only=True)
        ```
    """

    data_dir: str | os.PathLike[str] | None = None
    collection: str | None = None
    tag: str | None = None
    group: str | None = None
    pdf_abstracts: bool = True
    full_text: bool = True
    every_library: bool = False

    def __post_init__(self) -> None:
        if self.every_library and self.group is not None:
            raise InputError(f"group {self.group!r} and every library: choose one (a group "
                             "library alone, or every library with My Library)")

    #: What starts a library's name in a list of inputs.
    PREFIX = "zotero:"

    @classmethod
    def parse(cls, spec: str) -> ZoteroLibrary:
        """The library `zotero:[DATA_DIR][?collection=NAME&tag=TAG&group=NAME]` names
        (`&libraries=all`: every library of the data directory).

        Raises:
            InputError: a selector other than collection, tag, group and libraries.
        """
        body = spec[len(cls.PREFIX):] if spec.startswith(cls.PREFIX) else spec
        folder, _, query = body.partition("?")
        chosen: dict[str, str] = {}
        for name, values in parse_qs(query, keep_blank_values=True).items():
            if name not in _SELECTORS:
                raise InputError(f"{spec}: unknown selector {name!r}; a library takes "
                                 "?collection=NAME, &tag=TAG, &group=NAME and "
                                 "&libraries=all")
            chosen[name] = values[-1]
        every = chosen.get("libraries")
        if every is not None and every != _EVERY:
            raise InputError(f"{spec}: libraries={every!r}; write libraries=all (every "
                             "library), or group=NAME for one group library")
        return cls(folder or None, collection=chosen.get("collection"),
                   tag=chosen.get("tag"), group=chosen.get("group"),
                   every_library=every is not None)

    @property
    def database(self) -> Path:
        """The library's zotero.sqlite (InputError when there is none)."""
        return data_directory(self.data_dir) / DATABASE

    def snapshot(self) -> ZoteroReading:
        """The chosen items as the library holds them now (PDFs not yet read).

        Raises:
            InputError: no library there; not a Zotero database; damaged; an unknown
                group, collection or tag; Zotero kept writing while it was read.
        """
        folder = data_directory(self.data_dir)
        database = folder / DATABASE
        with snapshot(database) as connection:
            tables = read_tables(connection, database)
        selection = Selection(self.group, self.collection, self.tag, self.every_library)
        libraries, items, passed = select_items(tables, selection, database, folder,
                                                _base_directory())
        return ZoteroReading(database, items, [
            Skipped(database, None, key, reason, excluded=True) for _, key, reason in passed],
            ZoteroLibrary.PREFIX if self.every_library else id_prefix(libraries[0]),
            self.every_library)

    def sync_state(self) -> SourceState:
        """The library now, for `SearchEngine.sync`: its papers (no file read: with
        `full_text`, each with the stamp of the attachment it would be read from, which
        the sync compares with the stored one), the ids it owns (`zotero:KEY` of its
        library, every collection: an item moved out of a chosen collection is
        removed; with `every_library`, every library's, a group left included), and,
        for those to be written, their attachments read in full and PDF abstracts."""
        reading = self.snapshot()
        by_id = {str(item.record["id"]): item for item in reading.items}
        papers = [self._stamped(found[0], item) for item in reading.items
                  if not isinstance(found := item_paper(reading.database, item, pdfs=False),
                                    Skipped)]

        def complete(papers: Sequence[Paper]) -> list[Paper]:
            done = []
            for paper in papers:
                item = by_id[paper.id]
                reads_body = self.full_text and bool(item.attachments)
                if not reads_body and (paper.abstract or not self.pdf_abstracts
                                       or not item.pdfs):
                    done.append(paper)
                    continue
                found = item_paper(reading.database, item, pdfs=self.pdf_abstracts,
                                   full_text=self.full_text)
                done.append(paper if isinstance(found, Skipped) else found[0])
            return done

        return SourceState(papers, reading.owns, complete)

    def _stamped(self, paper: Paper, item: ZoteroItem) -> Paper:
        """`paper` with the stamp of the attachment it is read in full from (none
        without `full_text`)."""
        if not self.full_text:
            return paper
        return dataclasses.replace(paper, file_stamp=stamp(chosen_attachment(item.attachments)))

    def read(self, notes: list[dict[str, object]] | None = None
             ) -> Iterator[Located | Skipped]:
        """Every chosen item as a paper (title-only without an abstract), or `Skipped`;
        an abstract taken from a PDF is noted in `notes` (the report) with its source,
        and so is an attachment that could not be read in full, with the reason."""
        reading = self.snapshot()
        yield from reading.passed
        for item in reading.items:
            yield item_paper(reading.database, item, pdfs=self.pdf_abstracts,
                             full_text=self.full_text, notes=notes)


def item_paper(database: Path, item: ZoteroItem, *, pdfs: bool = True,
               full_text: bool = False, notes: list[dict[str, object]] | None = None
               ) -> Located | Skipped:
    """`item` as a paper and where it is; `Skipped` if it has neither title nor
    abstract. Without an abstract, one from its PDF when `pdfs` and it gives one (and
    a note of where it was found, in `notes`). With `full_text`, its attachment read in
    full (`fulltext.read_body`): its passages, file and the attachment's stamp (a note
    says why when it gave no passages)."""
    record = item.record
    chosen = chosen_attachment(item.attachments) if full_text else None
    stamped = stamp(chosen)  # before reading: a file changed meanwhile is read next time
    body = read_body(chosen) if chosen is not None else None
    found = _abstract_source(item, body) if not record["abstract"] and pdfs else None
    if chosen is not None and body is not None and body.skipped and notes is not None:
        notes.append(_body_note(body, str(record["id"]), chosen))
    if found is not None:
        record = {**record, "abstract": found.abstract}
        if notes is not None:
            notes.append(report_note(found, str(record["id"])))
    label = f"{item.key} “{str(record['title'])[:60]}”" if record["title"] else item.key
    if not record["abstract"] and not record["title"]:
        return Skipped(database, None, label, "no abstract and no title")
    try:
        paper = paper_from_record(record, default_id=str(record["id"]), path=database,
                                  title_only=True)
    except InputError as exc:
        return Skipped(database, None, label, exc.reason, malformed=True)
    if body is not None:
        paper = dataclasses.replace(paper, passages=body.passages, file=body.file,
                                    file_stamp=stamped)
    return paper, f"{database}: item {item.key}"


def _abstract_source(item: ZoteroItem, body: Body | None) -> PdfExtraction | None:
    """Where an item without an abstract takes one: the PDF its body was read from when
    that gave one, else the first of its other PDFs that does."""
    parsed = body.extraction if body is not None else None
    if parsed is not None and parsed.abstract:
        return parsed
    rest = tuple(path for path in item.pdfs if parsed is None or path != parsed.path)
    return pdf_abstract(rest) if rest else None


def _body_note(body: Body, entry: str, attachment: Attachment) -> dict[str, object]:
    """The report's entry for an attachment that gave no passages, and why."""
    where = attachment.path if body.extraction is not None else attachment.cache
    return {"file": str(where), "line": None, "entry": entry,
            "reason": f"not read in full ({body.source}): {body.skipped}", "malformed": False}


def pdf_abstract(paths: tuple[Path, ...]) -> PdfExtraction | None:
    """What the first of `paths` that gives an abstract holds, or None."""
    for path in paths:
        found = extract_pdf(path, full_text=False)
        if found.abstract:
            return found
    return None


def _base_directory() -> Path | None:
    """Where Zotero's preferences say linked files stored relative to a base live."""
    for prefs in profile_prefs():
        base = preference(prefs, "extensions.zotero.baseAttachmentPath")
        if isinstance(base, str) and base:
            return Path(base)
    return None


@register_format("zotero", (".sqlite",), "a Zotero library's zotero.sqlite, read in place "
                 "(read-only, safe while Zotero runs)")
def read_zotero(path: Path) -> Iterator[Located | Skipped]:
    return ZoteroLibrary(path).read()


def as_library(name: object) -> ZoteroLibrary | None:
    """`name` as a library if it names one (a `ZoteroLibrary`, or text `zotero:...`)."""
    if isinstance(name, ZoteroLibrary):
        return name
    if isinstance(name, str) and name.startswith(ZoteroLibrary.PREFIX):
        return ZoteroLibrary.parse(name)
    return None

