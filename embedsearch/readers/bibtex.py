"""BibTeX (`.bib`): one paper per entry, the citation key as its id.

Parsed by bibtexparser 2 (`@string` macros resolved, the braces or quotes around each
value removed); `crossref` and biblatex `xdata` are then resolved as BibTeX and biber
do (`resolve_references`), and `bibtex_record` maps one entry's fields onto our record
layout, LaTeX turned into plain text. An entry without an abstract becomes a title-only
paper (see `foreign`). A malformed entry (a missing brace) is skipped and named, and the
rest of the file read, as BibTeX, biber and Zotero do; `--strict` refuses the file.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..text.bibentry import KEPT_FIELDS, NAME_FIELDS, bib_fields, entry_type
from ..text.identifiers import normalise_arxiv_id
from ..text.latex import latex_to_text
from .base import Located, Skipped, read_text, register_format
from .foreign import Converted, doi_url, first_last, foreign_papers, split_keywords
from .records import Where

__all__ = ["BIBTEX_FIELDS", "bibtex_record", "read_bibtex"]

#: Our record field -> the BibTeX fields it is read from, first present wins. An exporter
#: writing .bib mirrors this (and `bibtex_record`'s rules) to read back the same papers.
BIBTEX_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("(citation key)",),
    "title": ("title",),
    "abstract": ("abstract",),
    "authors": ("author",),
    "year": ("year", "date"),
    "venue": ("journal", "booktitle", "journaltitle", "howpublished (unless a link)"),
    "keywords": ("keywords",),
    "url": ("doi", "url"),
    "arxiv_id": ("eprint (with archiveprefix or eprinttype arXiv)",),
    "entry_type": ("(entry type: biblatex's mapped onto BibTeX's)",),
    "bib_fields": KEPT_FIELDS,
}

#: Entry types that hold what their children share (a proceedings volume, a book):
#: when cross-referenced, they are never papers themselves.
_CONTAINERS = {"proceedings", "mvproceedings", "book", "mvbook", "collection",
               "mvcollection", "reference", "mvreference", "periodical", "xdata"}
#: Fields a child never takes from its parent: they describe the parent itself.
_OWN_FIELDS = {"abstract", "keywords", "doi", "url", "eprint", "eprinttype", "archiveprefix",
               "crossref", "xref", "xdata", "ids", "label", "shorthand", "sortkey", "entryset"}
#: A parent's field under the name a child gives it (biber's inproceedings-from-
#: proceedings rules): the volume's title is the paper's booktitle; its editors stay
#: editors, and a book's authors become the chapter's bookauthor, never its authors.
_RENAMED = {"title": "booktitle", "subtitle": "booksubtitle", "author": "bookauthor"}
_KEY = re.compile(r"@\s*\w+\s*[{(]\s*([^,\s{}()]+)\s*,")
_DATE_YEAR = re.compile(r"\s*([0-9]{4})\b")
_NAME_TOKENS = re.compile(r"[{}]|\s+and\s+", re.IGNORECASE)
# bibtexparser reports each aborted block on its own logger; our InputError says the same
# in one line, so its messages stay out of the terminal unless an application asks.
logging.getLogger("bibtexparser").addHandler(logging.NullHandler())


def _split_names(value: str) -> list[str]:
    """`value` split on " and " outside braces ("{Barnes and Noble}" is one name).

    Our own, as bibtexparser's splitter drops an accent such as \\' at the start of a
    name after "and" ("A and \\'Emile Zola" gave "Emile Zola").
    """
    names, depth, start = [], 0, 0
    for match in _NAME_TOKENS.finditer(value):
        token = match.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            names.append(value[start:match.start()])
            start = match.end()
    names.append(value[start:])
    return [name.strip() for name in names if name.strip()]


def _authors(value: str) -> list[str]:
    names = (first_last(latex_to_text(name)) for name in _split_names(value))
    return [name for name in names if name]


def _year(fields: Mapping[str, str]) -> str | None:
    """The `year` as written (checked with every other year), else the year of a `date`."""
    if fields.get("year", "").strip():
        return latex_to_text(fields["year"])
    match = _DATE_YEAR.match(fields.get("date", ""))
    return match.group(1) if match else None


def _venue_field(fields: Mapping[str, str]) -> str | None:
    """The field the venue is read from: journal, booktitle or journaltitle, else a misc
    entry's howpublished ("ICLR 2025"; biblatex has no journal for misc), unless that holds
    a link (`\\url{...}`, which is where, not in what, it was published)."""
    named = ("journal", "booktitle", "journaltitle", "howpublished")
    venue = next((name for name in named if fields.get(name, "").strip()), None)
    if venue == "howpublished" and re.search(r"\\url|://", fields[venue]):
        return None
    return venue


def _kept(fields: Mapping[str, str], venue: str | None) -> dict[str, str]:
    """The kept standard fields (`bibentry.KEPT_FIELDS`) as plain text, but the one that
    gave the venue; editors as "First Last and First Last", like the authors."""
    kept = bib_fields({name: value for name, value in fields.items() if name != venue})
    return {name: " and ".join(_authors(value)) if name in NAME_FIELDS else
            latex_to_text(value) for name, value in kept}


def bibtex_record(key: str, fields: Mapping[str, str], *, kind: str = "") -> dict[str, object]:
    """One BibTeX entry (its key, its field values without their outer braces, its entry
    type) as our record.

    Fields are matched case-insensitively. author is split on " and " outside braces and
    each "Last, First" turned into "First Last"; keywords split on ',' or ';'; doi becomes
    https://doi.org/DOI, preferred to url; every text but the url is LaTeX-decoded. The
    entry type and the other standard fields (publisher, editor, pages, ...) are kept.
    """
    fields = {name.lower(): value for name, value in fields.items()}
    venue = _venue_field(fields)
    doi = fields.get("doi", "").strip()
    archive = (fields.get("archiveprefix") or fields.get("eprinttype") or "").strip().lower()
    return {
        "id": key,
        "title": latex_to_text(fields.get("title", "")),
        "abstract": latex_to_text(fields.get("abstract", "")),
        "authors": _authors(fields.get("author", "")),
        "year": _year(fields),
        "venue": latex_to_text(fields[venue]) if venue else "",
        "keywords": split_keywords(latex_to_text(fields.get("keywords", ""))),
        "url": doi_url(doi) if doi else fields.get("url", "").strip(),
        # Only a valid id: a bibliography's eprint of another archive, or a typo, is no
        # reason to refuse the entry.
        "arxiv_id": normalise_arxiv_id(fields.get("eprint", "")) if archive == "arxiv" else "",
        "entry_type": entry_type(kind, thesis_kind=fields.get("type", "")),
        "bib_fields": dict(bib_fields(_kept(fields, venue))),
    }


def _failure(block: Any) -> str:
    error = block.error
    reason = getattr(error, "abort_reason", None) or str(error) or type(error).__name__
    return " ".join(str(reason).split())


def resolve_references(entries: dict[str, tuple[str, dict[str, str]]]
                       ) -> dict[str, dict[str, str]]:
    """Each entry's fields (lower-cased names) with what it lacks taken from the entries
    its `crossref` (renamed as `_RENAMED`, own fields kept out) and `xdata` (as they are)
    name, recursively; keys are matched ignoring case, and a loop is cut."""
    by_key = {key.lower(): (key, kind, fields) for key, (kind, fields) in entries.items()}
    done: dict[str, dict[str, str]] = {}
    started: set[str] = set()

    def fields_of(key: str) -> dict[str, str]:
        # Each entry resolved once (a file whose entries all name each other stays
        # linear); one met again while being resolved is a loop, cut at its own fields.
        if key in done:
            return done[key]
        own = by_key[key][2]
        if key in started:
            return own
        started.add(key)
        merged = dict(own)
        for name in (part.strip().lower() for part in own.get("xdata", "").split(",")):
            if name in by_key:
                for field, value in fields_of(name).items():
                    merged.setdefault(field, value)
        parent = own.get("crossref", "").strip().lower()
        if parent in by_key:
            for field, value in fields_of(parent).items():
                if field not in _OWN_FIELDS:
                    merged.setdefault(_RENAMED.get(field, field), value)
        done[key] = merged
        return merged

    return {original: fields_of(key) for key, (original, _, _) in by_key.items()}


def _referenced(entries: dict[str, tuple[str, dict[str, str]]]) -> set[str]:
    """Keys (lower-cased) other entries name in `crossref` or `xdata`."""
    names: set[str] = set()
    for _, fields in entries.values():
        names.add(fields.get("crossref", "").strip().lower())
        names.update(part.strip().lower() for part in fields.get("xdata", "").split(","))
    return names - {""}


def _malformed(path: Path, block: Any, reason: str) -> Skipped:
    line = (block.start_line or 0) + 1
    key = _KEY.match(getattr(block, "raw", "") or "")
    label = f"{key.group(1)} (line {line})" if key else f"line {line}"
    return Skipped(path, line, label, f"malformed BibTeX entry: {reason}", malformed=True)


def _split_concatenation(value: str) -> list[str]:
    """The parts of `value` joined by '#' outside braces and quotes, or [value]."""
    parts, depth, quoted, start = [], 0, False, 0
    for position, char in enumerate(value):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == "#" and depth == 0 and not quoted:
            parts.append(value[start:position].strip())
            start = position + 1
    return [*parts, value[start:].strip()] if parts else [value]


def _concatenated(value: str, strings: Mapping[str, str]) -> str | None:
    """`{intro} # macro # "outro"` as one braced value, or None if `value` joins nothing.
    (bibtexparser 2 resolves a lone macro but leaves concatenations as they are.)"""
    parts = _split_concatenation(value)
    if len(parts) < 2:
        return None
    texts = []
    for part in parts:
        if len(part) >= 2 and part[0] + part[-1] in ("{}", '""'):
            texts.append(part[1:-1])
        else:
            texts.append(strings.get(part.lower(), part))
    return "{" + "".join(texts) + "}"


def _parse_stack() -> list[Any]:
    """bibtexparser's default middleware, with '#' concatenation resolved first."""
    from bibtexparser.middlewares import (
        LibraryMiddleware,
        RemoveEnclosingMiddleware,
        ResolveStringReferencesMiddleware,
    )

    class Concatenate(LibraryMiddleware):
        def transform(self, library: Any) -> Any:
            strings: dict[str, str] = {}
            for key, block in library.strings_dict.items():  # in order: a macro may use one
                value = _concatenated(block.value, strings) or block.value
                strings[key.lower()] = value[1:-1] if value[:1] + value[-1:] in ("{}", '""') \
                    else strings.get(value.lower(), value)
            for entry in library.entries:
                for field in entry.fields:
                    if isinstance(field.value, str):
                        field.value = _concatenated(field.value, strings) or field.value
            return library

    return [Concatenate(True), ResolveStringReferencesMiddleware(True),
            RemoveEnclosingMiddleware(True)]


def _blocks(path: Path) -> Iterator[tuple[Any, int] | Skipped]:
    """(entry, line) of each entry, `Skipped` for each that could not be parsed."""
    from bibtexparser import model
    from bibtexparser.entrypoint import parse_string

    for found in parse_string(read_text(path), parse_stack=_parse_stack()).blocks:
        block: model.Block | None = found
        if isinstance(found, model.DuplicateBlockKeyBlock):
            # The entry itself: the duplicate id check then names both places. A second
            # @string of the same name is dropped (the first one holds).
            block = found.ignore_error_block
        elif isinstance(found, model.ParsingFailedBlock):
            yield _malformed(path, found, _failure(found))
            continue
        if isinstance(block, model.Entry):
            if not all(isinstance(field.value, str) for field in block.fields):
                yield _malformed(path, block, "a field value is not text")
                continue
            yield block, (found.start_line or 0) + 1


def _entries(path: Path) -> Iterator[Converted | Skipped]:
    """Every entry, in file order, with its references resolved (a duplicate key keeps
    its own fields, and the duplicate check then names both places)."""
    found: list[tuple[str, str, dict[str, str], int]] = []
    for item in _blocks(path):
        if isinstance(item, Skipped):
            yield item
            continue
        block, line = item
        found.append((block.key, block.entry_type.lower(),
                      {field.key.lower(): field.value for field in block.fields}, line))
    entries: dict[str, tuple[str, dict[str, str]]] = {}
    for key, kind, fields, _ in found:
        entries.setdefault(key, (kind, fields))
    resolved = resolve_references(entries)
    parents = _referenced(entries)
    for key, kind, fields, line in found:
        merged = resolved[key] if entries[key][1] is fields else fields
        if kind == "xdata" or (key.lower() in parents
                               and (kind in _CONTAINERS or not merged.get("abstract"))):
            continue  # what its papers point to, not a paper
        yield bibtex_record(key, merged, kind=kind), Where(path, line, None), f"{key} (line {line})"


@register_format("bibtex", (".bib", ".bibtex"), "BibTeX entries")
def read_bibtex(path: Path) -> Iterator[Located | Skipped]:
    return foreign_papers(path, _entries(path))
