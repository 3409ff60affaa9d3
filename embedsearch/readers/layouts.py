"""Other tools' records: the layouts sniffed inside JSON files, and entries without abstracts.

A layout (CSL-JSON, the arXiv snapshot, OpenAlex) converts one foreign JSON object into
our record layout (see `records`), which `paper_from_record` then validates like any
other. The JSON and JSON Lines readers pick a layout from the first record of a file
(`sniff_layout`), or are told one by a format name (`--format arxiv`).

Exports of reference managers and bibliographic databases routinely hold entries
without an abstract (a book, an editorial). Those are skipped and reported in one
warning per file, on the `embedsearch.readers` logger, rather than refused; a file with
no abstract at all is an error. Our own layouts keep requiring an abstract on every
record, where a missing one is a mistake in the script that wrote the file.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..papers import derive_id
from .base import Located, source_name
from .records import Where, kind, paper_from_record

__all__ = [
    "Converted",
    "Layout",
    "collapse",
    "doi_url",
    "first_last",
    "foreign_papers",
    "layout_named",
    "optional_text",
    "register_layout",
    "sniff_layout",
    "split_keywords",
    "year_in",
]

_log = logging.getLogger("embedsearch.readers")
_SHOWN = 10
_YEAR_IN_TEXT = re.compile(r"(?<![0-9])([0-9]{4})(?![0-9])")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_KEYWORD_SEPARATORS = re.compile(r"[;,]")

#: One converted entry: our record, where it is, and how to name it if it is skipped.
Converted = tuple[dict[str, object], Where, str]
Convert = Callable[[Mapping[str, object], Where], dict[str, object]]


@dataclass(frozen=True)
class Layout:
    """A foreign JSON record layout: how to recognise one record, how to convert it."""

    name: str
    looks_like: Callable[[Mapping[str, object]], bool]
    convert: Convert


_LAYOUTS: dict[str, Layout] = {}


def register_layout(
    name: str, looks_like: Callable[[Mapping[str, object]], bool]
) -> Callable[[Convert], Convert]:
    """Make the decorated converter layout `name`, chosen for records `looks_like` accepts."""

    def decorate(convert: Convert) -> Convert:
        _LAYOUTS[name] = Layout(name, looks_like, convert)
        return convert

    return decorate


def layout_named(name: str) -> Layout:
    return _LAYOUTS[name]


def sniff_layout(record: Mapping[str, object]) -> Layout | None:
    """The foreign layout `record` is in, or None for our own."""
    for layout in _LAYOUTS.values():
        if layout.looks_like(record):
            return layout
    return None


# -- helpers for converters ---------------------------------------------------------------
def collapse(text: str) -> str:
    """`text` with every run of whitespace (arXiv's hard line wraps) as one space."""
    return " ".join(text.split())


def optional_text(raw: Mapping[str, object], key: str, where: Where) -> str:
    """The text under `key`, whitespace collapsed; '' when absent or null."""
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise where.error(f"expected text, got {kind(value)}", key)
    return collapse(value)


def first_last(name: str) -> str:
    """'Müller, Jörg' -> 'Jörg Müller'; 'Last, Jr., First' -> 'First Last Jr.'."""
    parts = [part.strip() for part in name.split(",")]
    if len(parts) == 2:
        parts = [parts[1], parts[0]]
    elif len(parts) >= 3:
        parts = [", ".join(parts[2:]), parts[0], parts[1]]
    return collapse(" ".join(part for part in parts if part))


def doi_url(doi: str) -> str:
    """https://doi.org/... for a DOI given bare, as doi:..., or already as a URL."""
    bare = _DOI_PREFIX.sub("", doi.strip())
    return f"https://doi.org/{bare}" if bare else ""


def split_keywords(text: str) -> list[str]:
    """Keywords from one text separated by ',' or ';'."""
    return [word.strip() for word in _KEYWORD_SEPARATORS.split(text) if word.strip()]


def year_in(text: str, key: str, where: Where) -> int | None:
    """The four-digit year in a date such as '2020-05-01' or 'Mon, 2 Apr 2007 ...'."""
    if not text.strip():
        return None
    match = _YEAR_IN_TEXT.search(text)
    if match is None:
        raise where.error(f"expected a date with a four-digit year, got {text[:40]!r}", key)
    return int(match.group(1))


# -- entries without an abstract ----------------------------------------------------------
def _has_abstract(record: Mapping[str, object]) -> bool:
    value = record.get("abstract")
    return value is not None and not (isinstance(value, str) and not value.strip())


def _report(path: Path, skipped: list[str], kept: int) -> None:
    if not skipped:
        return
    shown = ", ".join(skipped[:_SHOWN])
    more = f" and {len(skipped) - _SHOWN} more" if len(skipped) > _SHOWN else ""
    if kept == 0:
        raise InputError(f"none of its {len(skipped)} entries has an abstract ({shown}{more}); "
                         "every paper needs one to be searched", path=path)
    _log.warning("%s: skipped %d %s without an abstract: %s%s", path, len(skipped),
                 "entry" if len(skipped) == 1 else "entries", shown, more)


def foreign_papers(path: Path, entries: Iterable[Converted]) -> Iterator[Located]:
    """Papers of converted entries; those without an abstract are skipped and reported."""
    stem = source_name(path)
    skipped: list[str] = []
    kept = 0
    for position, (record, where, label) in enumerate(entries, 1):
        if not _has_abstract(record):
            skipped.append(label)
            continue
        kept += 1
        paper = paper_from_record(record, default_id=derive_id(stem, position), path=path,
                                  line=where.line, record=where.record)
        place = f"{path}:{where.line}" if where.line is not None else \
            f"{path}: record {where.record}"
        yield paper, place
    _report(path, skipped, kept)
