"""The arXiv metadata dump (Kaggle's arxiv-metadata-oai-snapshot.json): JSON Lines.

Each line: `id`, `title`, `abstract` (hard-wrapped: whitespace is collapsed), `authors`
(one text, "A, B and C", with LaTeX accents) or `authors_parsed` [[last, first, suffix]],
`categories` ("cs.LG stat.ML") -> keywords, `versions` [{created: "Mon, 2 Apr 2007
..."}] -> the year of the first version, else `update_date`. The url is
https://arxiv.org/abs/ID and the venue "arXiv". A `.jsonl` file is read this way when
its first record has `categories` and `versions` or `update_date`; the dump's own
name ends in `.json`, so pass `--format arxiv` for it (or rename it `.jsonl`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..text.identifiers import normalise_doi
from ..text.latex import latex_to_text
from .base import Located, Skipped, register_format
from .foreign import collapse, dialect_named, optional_text, register_dialect, year_in
from .jsonl import read_json_lines
from .records import Where, kind

__all__ = ["arxiv_record", "read_arxiv"]

_AUTHOR_SEPARATORS = re.compile(r",\s*|\s+and\s+")


def _looks_like_arxiv(raw: Mapping[str, object]) -> bool:
    return "categories" in raw and ("versions" in raw or "update_date" in raw)


def _parsed_authors(value: list[object], where: Where) -> list[str]:
    names = []
    for parts in value:
        if not isinstance(parts, list) or not all(isinstance(part, str) for part in parts):
            raise where.error(f"expected [last, first, suffix] texts, got {kind(parts)}",
                              "authors_parsed")
        last, first, *rest = [*parts, "", ""]
        name = collapse(" ".join((first, last, *rest)))
        if name:
            names.append(latex_to_text(name))
    return names


def _authors(raw: Mapping[str, object], where: Where) -> list[str]:
    parsed = raw.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        return _parsed_authors(parsed, where)
    text = latex_to_text(optional_text(raw, "authors", where))
    return [name.strip() for name in _AUTHOR_SEPARATORS.split(text) if name.strip()]


def _year(raw: Mapping[str, object], where: Where) -> int | None:
    versions = raw.get("versions")
    if isinstance(versions, list) and versions:
        first = versions[0]
        created = first.get("created") if isinstance(first, dict) else None
        if not isinstance(created, str):
            raise where.error("expected versions as [{created: 'Mon, 2 Apr 2007 ...'}], got "
                              f"{kind(first)}", "versions")
        return year_in(created, "versions", where)
    return year_in(optional_text(raw, "update_date", where), "update_date", where)


@register_dialect("arxiv", _looks_like_arxiv)
def arxiv_record(raw: Mapping[str, object], where: Where) -> dict[str, object]:
    """One record of the dump in our record fields."""
    identifier = optional_text(raw, "id", where)
    return {
        "id": identifier,
        "title": optional_text(raw, "title", where),
        "abstract": optional_text(raw, "abstract", where),
        "authors": _authors(raw, where),
        "keywords": optional_text(raw, "categories", where).split(),
        "year": _year(raw, where),
        "venue": "arXiv",
        "url": f"https://arxiv.org/abs/{identifier}" if identifier else "",
        "doi": normalise_doi(optional_text(raw, "doi", where)),  # the journal's, if any
    }


@register_format("arxiv", (), "the arXiv metadata dump (JSON Lines)")
def read_arxiv(path: Path) -> Iterator[Located | Skipped]:
    return read_json_lines(path, dialect_named("arxiv"))
