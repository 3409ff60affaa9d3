"""BibTeX (`.bib`): one paper per entry with an abstract, the citation key as its id.

Parsed by bibtexparser 2 (`@string` macros resolved, the braces or quotes around each
value removed); `bibtex_record` then maps one entry's fields onto our record layout,
LaTeX turned into plain text. Entries without an abstract are skipped and reported
(see `layouts`); a malformed entry is an error naming its line.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .base import Located, read_text, register_format
from .latex import latex_to_text
from .layouts import Converted, doi_url, first_last, foreign_papers, split_keywords
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
    "venue": ("journal", "booktitle", "journaltitle"),
    "keywords": ("keywords",),
    "url": ("doi", "url"),
}

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


def _first(fields: Mapping[str, str], names: tuple[str, ...]) -> str:
    return next((fields[name] for name in names if fields.get(name, "").strip()), "")


def bibtex_record(key: str, fields: Mapping[str, str]) -> dict[str, object]:
    """One BibTeX entry (its key, its field values without their outer braces) as our record.

    Fields are matched case-insensitively. author is split on " and " outside braces and
    each "Last, First" turned into "First Last"; keywords split on ',' or ';'; doi becomes
    https://doi.org/DOI, preferred to url; every text but the url is LaTeX-decoded.
    """
    fields = {name.lower(): value for name, value in fields.items()}
    doi = fields.get("doi", "").strip()
    return {
        "id": key,
        "title": latex_to_text(fields.get("title", "")),
        "abstract": latex_to_text(fields.get("abstract", "")),
        "authors": _authors(fields.get("author", "")),
        "year": _year(fields),
        "venue": latex_to_text(_first(fields, BIBTEX_FIELDS["venue"])),
        "keywords": split_keywords(latex_to_text(fields.get("keywords", ""))),
        "url": doi_url(doi) if doi else fields.get("url", "").strip(),
    }


def _failure(block: Any) -> str:
    error = block.error
    reason = getattr(error, "abort_reason", None) or str(error) or type(error).__name__
    return " ".join(str(reason).split())


def _entries(path: Path) -> Iterator[Converted]:
    from bibtexparser import model
    from bibtexparser.entrypoint import parse_string

    for found in parse_string(read_text(path)).blocks:
        line = (found.start_line or 0) + 1
        block: model.Block | None = found
        if isinstance(found, model.DuplicateBlockKeyBlock):
            # The entry itself: the duplicate id check then names both places. A second
            # @string of the same name is dropped (the first one holds).
            block = found.ignore_error_block
        elif isinstance(found, model.ParsingFailedBlock):
            raise InputError(f"malformed BibTeX entry: {_failure(found)}", path=path, line=line)
        if isinstance(block, model.Entry):
            values = {field.key: field.value for field in block.fields}
            if not all(isinstance(value, str) for value in values.values()):
                raise InputError("malformed BibTeX entry: a field value is not text",
                                 path=path, line=line)
            record = bibtex_record(block.key, values)
            yield record, Where(path, line, None), f"{block.key} (line {line})"


@register_format("bibtex", (".bib", ".bibtex"), "BibTeX entries (with abstracts)")
def read_bibtex(path: Path) -> Iterator[Located]:
    return foreign_papers(path, _entries(path))
