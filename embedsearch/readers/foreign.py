"""Other tools' records: the dialects sniffed inside JSON files, and entries without abstracts.

A dialect (CSL-JSON, the arXiv metadata dump, OpenAlex) converts one foreign JSON object into
our record fields (see `records`), which `paper_from_record` then validates like any
other. The JSON and JSON Lines readers pick a dialect from the first record of a file
(`sniff_dialect`), or are told one by a format name (`--format arxiv`).

Exports of reference managers and bibliographic databases routinely hold entries
without an abstract (a hand-written thesis bibliography holds few). Such an entry with
a title becomes a title-only paper (`Paper.title_only`), which the caller keeps as an
example or drops, reporting it (see `readers.read_bibliography`); one with neither is
`Skipped`. Our own formats keep requiring an abstract on every record, where a missing
one is a mistake in the script that wrote the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..papers import derive_id
from .base import Located, Skipped, source_name
from .records import Where, kind, paper_from_record

__all__ = [
    "Converted",
    "Dialect",
    "collapse",
    "doi_url",
    "first_last",
    "foreign_papers",
    "dialect_named",
    "optional_text",
    "register_dialect",
    "sniff_dialect",
    "split_keywords",
    "year_in",
]

_YEAR_IN_TEXT = re.compile(r"(?<![0-9])([0-9]{4})(?![0-9])")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_KEYWORD_SEPARATORS = re.compile(r"[;,]")

#: One converted entry: our record, where it is, and how to name it if it is skipped.
Converted = tuple[dict[str, object], Where, str]
Convert = Callable[[Mapping[str, object], Where], dict[str, object]]


@dataclass(frozen=True)
class Dialect:
    """a foreign JSON dialect: how to recognise one record, how to convert it."""

    name: str
    looks_like: Callable[[Mapping[str, object]], bool]
    convert: Convert


_DIALECTS: dict[str, Dialect] = {}


def register_dialect(
    name: str, looks_like: Callable[[Mapping[str, object]], bool]
) -> Callable[[Convert], Convert]:
    """Make the decorated converter dialect `name`, chosen for records `looks_like` accepts."""

    def decorate(convert: Convert) -> Convert:
        _DIALECTS[name] = Dialect(name, looks_like, convert)
        return convert

    return decorate


def dialect_named(name: str) -> Dialect:
    return _DIALECTS[name]


def sniff_dialect(record: Mapping[str, object]) -> Dialect | None:
    """The foreign dialect `record` is in, or None for our own."""
    for dialect in _DIALECTS.values():
        if dialect.looks_like(record):
            return dialect
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
def _has_text(record: Mapping[str, object], key: str) -> bool:
    value = record.get(key)
    return value is not None and not (isinstance(value, str) and not value.strip())


def foreign_papers(path: Path, entries: Iterable[Converted | Skipped]
                   ) -> Iterator[Located | Skipped]:
    """Papers of converted entries: title-only ones for entries without an abstract,
    `Skipped` for those without a title either (and any the reader passed over)."""
    stem = source_name(path)
    for position, entry in enumerate(entries, 1):
        if isinstance(entry, Skipped):
            yield entry
            continue
        record, where, label = entry
        if not _has_text(record, "abstract") and not _has_text(record, "title"):
            yield Skipped(path, where.line, label, "no abstract and no title")
            continue
        paper = paper_from_record(record, default_id=derive_id(stem, position), path=path,
                                  line=where.line, record=where.record, title_only=True)
        place = f"{path}:{where.line}" if where.line is not None else \
            f"{path}: record {where.record}"
        yield paper, place
