"""Reading corpora: every input file becomes checked `Paper` records.

The format is chosen by extension (`.txt`, `.jsonl`, `.json`, `.csv`, `.tsv`, `.bib`,
`.ris`, each optionally `.gz`) or named with `format=`; inside JSON and JSON Lines the
first record may show another tool's dialect (CSL-JSON, the arXiv metadata dump, OpenAlex:
see `foreign`). A Zotero library is read in place: a `ZoteroLibrary`, or `zotero:...`
among the inputs (see `zotero`). A new format is one new module in this package that
registers its reader with `base.register_format`.

A `.pdf` is one paper, its title, abstract and authors read from its first pages and
its body as passages with their pages (see `pdf`; `full_text=False` reads the first
pages only); a folder among the inputs stands for the PDFs inside it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import InputError
from ..papers import Paper
from . import (  # noqa: F401
    arxiv,
    bibtex,
    csljson,
    csvfile,
    jsonarray,
    jsonl,
    openalex,
    pdf,
    ris,
    text,
    zotero,
)
from .base import FormatSpec, Located, Skipped, format_for, formats, source_name
from .zotero import ZoteroLibrary, as_library

# The imports above register each format (and dialect); bibtexparser, rispy and pylatexenc
# are imported only when a file of theirs is read.
__all__ = ["Bibliography", "FormatSpec", "Skipped", "Source", "ZoteroLibrary", "formats",
           "iter_papers", "read_bibliography", "read_papers", "stream_papers"]

#: What papers are read from: a file, or a library read in place.
Source = str | Path | ZoteroLibrary

_log = logging.getLogger("embedsearch.readers")
#: Entries named in a warning before "and N more".
_SHOWN = 5
_NO_ABSTRACT = "no abstract (title only)"
_NO_TITLE = "no abstract and no title"  # foreign.py's reason


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError("no such file", path=path)
    if path.stat().st_size == 0:
        raise InputError("the file is empty", path=path)


def _folder_pdfs(folder: Path, format: str | None) -> list[Path]:
    """The PDFs inside `folder` and its subfolders, in name order; hidden files and
    folders (".git", macOS's "._paper.pdf") left out."""
    if format not in (None, "pdf"):
        raise InputError(f"is a directory: a directory is read for the PDFs inside it, so "
                         f"--format {format} does not apply; pass its files by name", path=folder)
    found = []
    for root, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if not name.startswith(".")]
        found += [Path(root, name) for name in files
                  if name.lower().endswith(".pdf") and not name.startswith(".")]
    if not found:
        raise InputError("is a directory with no PDF in it (a directory is read for the PDFs "
                         "inside it, subdirectories too); pass other files by name", path=folder)
    return sorted(found, key=lambda path: path.relative_to(folder).parts)


def _read(spec: FormatSpec, path: Path, notes: list[dict[str, object]] | None,
          full_text: bool) -> Iterator[Located | Skipped]:
    """One file's entries; the PDF and Zotero readers also note where they found each
    field (a PDF's), and the PDF reader reads the body when `full_text`."""
    if spec.read is pdf.read_pdf_file:
        return pdf.read_pdf_file(path, notes, full_text=full_text)
    if spec.read is zotero.read_zotero:
        return ZoteroLibrary(path, full_text=full_text).read(notes)
    return spec.read(path)


def _folder_entries(folder: Path, files: list[Path], notes: list[dict[str, object]] | None,
                    full_text: bool) -> Iterator[Located | Skipped]:
    """Every PDF's entry in `folder`. A PDF in a subfolder is known by its path from the
    folder ("2023/smith"), so two files of one name in two subfolders stay two papers."""
    for file in files:
        prefix = file.parent.relative_to(folder).as_posix()
        noted: list[dict[str, object]] = []
        for item in pdf.read_pdf_file(file, noted, full_text=full_text):
            if prefix == ".":
                yield item
            elif isinstance(item, Skipped):
                yield replace(item, label=f"{prefix}/{item.label}")
            else:
                yield replace(item[0], id=f"{prefix}/{item[0].id}"), item[1]
                for note in noted:
                    note["entry"] = f"{prefix}/{note['entry']}"
        if notes is not None:
            notes.extend(noted)


def _source(path: Path, format: str | None, notes: list[dict[str, object]] | None,
            full_text: bool) -> tuple[FormatSpec, Iterator[Located | Skipped]]:
    """The format of input `path` and its entries: a file's, or a folder's PDFs'."""
    if path.is_dir():
        return formats()["pdf"], _folder_entries(path, _folder_pdfs(path, format), notes,
                                                 full_text)
    _check_file(path)
    spec = format_for(path, format)
    return spec, _read(spec, path, notes, full_text)


def _names(entries: list[Skipped]) -> str:
    shown = ", ".join(entry.label for entry in entries[:_SHOWN])
    more = f" and {len(entries) - _SHOWN} more" if len(entries) > _SHOWN else ""
    return shown + more


def _entries(count: int, kind: str = "") -> str:
    """Counted and named: "1 entry", "3 malformed entries"."""
    return " ".join(filter(None, [str(count), kind, "entry" if count == 1 else "entries"]))


def _summary(path: Path, skipped: list[Skipped]) -> str:
    """Every kind of problem of one file in one line: counts and the first few."""
    parts = []
    missing = [entry for entry in skipped if entry.reason == _NO_ABSTRACT]
    if missing:
        parts.append(f"skipped {_entries(len(missing))} without an abstract: "
                     f"{_names(missing)}")
    malformed = [entry for entry in skipped if entry.malformed]
    if malformed:
        parts.append(f"skipped {_entries(len(malformed), 'malformed')}: "
                     f"{_names(malformed)} (first: {malformed[0].reason})")
    other = [entry for entry in skipped if entry not in missing and entry not in malformed]
    untitled = [entry for entry in other if entry.reason == _NO_TITLE]
    if untitled:
        parts.append(f"skipped {_entries(len(untitled))} with neither abstract nor title: "
                     f"{_names(untitled)}")
    for reason in dict.fromkeys(entry.reason for entry in other if entry.reason != _NO_TITLE):
        named = [entry for entry in other if entry.reason == reason]
        parts.append(f"skipped {_entries(len(named))} ({reason}): {_names(named)}")
    return f"{path}: " + "; ".join(parts)


def _finish_file(path: Path, spec: FormatSpec, kept: int, skipped: list[Skipped],
                 title_only: bool) -> None:
    """Warn of what one file's reading passed over, or refuse a file that gave nothing.
    Entries `excluded` by rule (notes, the trash) are neither warned about nor blamed."""
    skipped = [entry for entry in skipped if not entry.excluded]
    if kept:
        if skipped:
            hint = ("" if title_only or not any(e.reason == _NO_ABSTRACT for e in skipped)
                    else " (--allow-title-only indexes entries on their titles)")
            _log.warning("%s%s", _summary(path, skipped), hint)
        return
    if not skipped:
        raise InputError(f"no papers found (read as {spec.name}: {spec.description})",
                         path=path)
    if any(entry.reason == _NO_ABSTRACT for entry in skipped):
        raise InputError(
            f"none of its {len(skipped)} entries has an abstract ({_names(skipped)}); the "
            "index is of abstracts: --allow-title-only indexes them on their titles (as "
            "examples, `similar --from` uses them as they are)", path=path)
    first = skipped[0]
    raise InputError(f"no papers could be read: {first.reason} (entry {first.label})"
                     + (f"; and {len(skipped) - 1} more skipped" if len(skipped) > 1 else ""),
                     path=path, line=first.line)


def _title_only(path: Path, paper: Paper, place: str) -> Skipped:
    """A title-only paper left out, named as the user finds it: "key (line 24)", or by
    its title where the file gave no id (a RIS entry without ID) or where the place
    names it ("item KEY")."""
    position = place[len(str(path)):].lstrip(":/\\").strip()  # "24" or "record 3"
    line = int(position) if position.isdigit() else None
    shown = f"line {position}" if line is not None else position
    derived = re.fullmatch(rf"{re.escape(source_name(path))}:\d+", paper.id) is not None
    # A place that names the entry already ("item KEY" of a Zotero library) adds its title.
    named = position.startswith("item ")
    name = f"“{paper.title[:60]}”" if derived or named else paper.id
    return Skipped(path, line, f"{name} ({shown})", _NO_ABSTRACT)


def _opened(name: Source, format: str | None, notes: list[dict[str, object]] | None,
            full_text: bool) -> tuple[Path, FormatSpec, Iterator[Located | Skipped]]:
    """The file (or library database) `name` reads, its format and its entries."""
    library = as_library(name)
    if library is not None:
        if not full_text:  # abstract only: no attachment read in full, whatever it asked
            library = dataclasses.replace(library, full_text=False)
        return (library.database, format_for(Path("zotero.sqlite"), "zotero"),
                library.read(notes))
    assert not isinstance(name, ZoteroLibrary)
    path = Path(name)
    spec, entries = _source(path, format, notes, full_text)
    return path, spec, entries


def iter_papers(paths: Iterable[Source], format: str | None = None, *,
                title_only: bool = False, strict: bool = False,
                skipped: list[Skipped] | None = None,
                notes: list[dict[str, object]] | None = None,
                full_text: bool = True) -> Iterator[Located]:
    """(paper, "file:line") for every record of every file, in order, validated.

    Entries a reader passes over, and title-only ones unless `title_only`, go to
    `skipped` (when given) and are reported in one warning per file; `strict` makes a
    malformed entry an error instead. A file that gives no paper is an error. A folder
    stands for the PDFs inside it and is an error only when none of them gives a paper;
    readers that note where they found each field (the PDF reader) add to `notes`. A
    PDF is read in full (its body as `Paper.passages`) unless `full_text` is False.
    """
    for name in paths:
        path, spec, entries = _opened(name, format, notes, full_text)
        kept = 0
        passed_over: list[Skipped] = []
        for item in entries:
            if isinstance(item, Skipped):
                if strict and item.malformed:
                    raise InputError(f"{item.reason} (entry {item.label}; without --strict "
                                     "such an entry is skipped)", path=path, line=item.line)
                passed_over.append(item)
                continue
            paper, place = item
            if paper.title_only and not title_only:
                passed_over.append(_title_only(path, paper, place))
                continue
            kept += 1
            yield item
        if skipped is not None:
            skipped.extend(passed_over)
        _finish_file(path, spec, kept, passed_over, title_only)


@dataclass
class Bibliography:
    """What reading files gave: the papers kept, every entry passed over, and `notes`:
    where a reader found each field of a paper whose fields it had to find (the PDF
    reader: one note per PDF read, see `pdf.report_note`)."""

    papers: list[Paper]
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[dict[str, object]] = field(default_factory=list)

    def report(self) -> list[dict[str, object]]:
        """Every skipped and every title-only entry, then the notes, as plain data
        (`--report FILE`)."""
        title_only = [{"entry": paper.id, "title": paper.title, "reason": "title only: "
                       "encoded from its title", "malformed": False}
                      for paper in self.papers if paper.title_only]
        return [entry.to_dict() for entry in self.skipped] + title_only + self.notes


def read_bibliography(paths: Iterable[Source], format: str | None = None, *,
                      title_only: bool = False, strict: bool = False,
                      full_text: bool = True) -> Bibliography:
    """All papers of `paths`, and every entry passed over with the reason.

    Args:
        paths: files in any [input format](input-formats.md), each chosen by its
            extension or first record (`.gz` read as it goes), folders (the PDFs in
            them), and Zotero libraries read in place (a `ZoteroLibrary`, or
            `"zotero:"` for the default one).
        format: read every file as this format (`jsonl`, `bibtex`, `ris`, ...).
        title_only: keep entries without an abstract, known by their titles, instead
            of passing over them.
        strict: make a malformed entry an error instead of passing over it.
        full_text: read each PDF's body as passages with their pages (the default);
            False reads only its first pages, for the title, abstract and authors.

    Returns:
        The papers kept and the entries skipped (`Bibliography.report()` lists them).

    Raises:
        InputError: a file that cannot be read, a bad field, or an id given twice;
            the message names the file, line and field (both places for an id).
    """
    found = Bibliography([])
    found.papers.extend(stream_papers(paths, format, title_only=title_only, strict=strict,
                                      skipped=found.skipped, notes=found.notes,
                                      full_text=full_text))
    return found


def stream_papers(paths: Iterable[Source], format: str | None = None, *,
                  title_only: bool = False, strict: bool = False,
                  skipped: list[Skipped] | None = None,
                  notes: list[dict[str, object]] | None = None,
                  full_text: bool = True) -> Iterator[Paper]:
    """The papers of `paths` as they are read, each id once: what a build consumes a
    buffer at a time, so that a folder of PDFs is never all in memory. Arguments as for
    `iter_papers`; an id given twice is an `InputError` naming both places."""
    seen: dict[str, str] = {}
    for paper, where in iter_papers(paths, format, title_only=title_only, strict=strict,
                                    skipped=skipped, notes=notes, full_text=full_text):
        if paper.id in seen:
            raise InputError(f"duplicate id '{paper.id}' (first at {seen[paper.id]})", path=where)
        seen[paper.id] = where
        yield paper


def read_papers(paths: Iterable[Source], format: str | None = None, *,
                title_only: bool = False, strict: bool = False,
                full_text: bool = True) -> list[Paper]:
    """All papers of `paths`, what was passed over logged as warnings.

    Arguments and errors as for `read_bibliography`.

    Example:
        ```python
        from embedsearch import read_papers

        papers = read_papers(["library.bib", "refs.bib"])
        print(len(papers), papers[0].id, papers[0].title)
        ```
    """
    return read_bibliography(paths, format, title_only=title_only, strict=strict,
                             full_text=full_text).papers
