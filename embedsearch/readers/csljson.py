"""CSL-JSON, as Zotero exports it ("CSL JSON" or Better BibTeX's "Better CSL JSON").

A JSON array of items: `id`, `title`, `abstract`, `author` [{family, given} or
{literal}], `issued` {date-parts: [[year, month, day]]} (or {raw} / {literal}),
`container-title` -> venue, `DOI` -> url https://doi.org/..., else `URL`, `keyword`
(one text, ',' or ';' separated), `type` -> the BibTeX entry type (`bibentry.CSL_TYPES`),
and the standard fields of `CSL_KEPT` under their BibTeX names (`publisher` is a
thesis's school, a report's institution; `number` a report's number; a `page` range
"1-10" is BibTeX's "1--10"; the month of `issued` the month; a thesis whose `genre`
says master's a mastersthesis), `archive_location` "arXiv:ID" (where Zotero keeps a
preprint's arXiv id, as our export does) the arXiv id. CSL's `article` is a preprint,
a misc entry. A `.json` file is read as CSL-JSON when its first
item has `issued` or `container-title`, or authors as objects: keys our own fields
never uses, so a file of ours is never mistaken for one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from ..text.bibentry import CSL_TYPES, bib_fields, month_name, page_range
from ..text.identifiers import normalise_arxiv_id
from .base import Located, Skipped, register_format
from .foreign import (
    collapse,
    dialect_named,
    doi_url,
    optional_text,
    register_dialect,
    split_keywords,
    year_in,
)
from .jsonarray import read_json_document
from .records import Where, kind

__all__ = ["CSL_KEPT", "csl_record", "read_csl_json"]

#: The BibTeX field each kept CSL variable gives (`publisher` depends on the type).
CSL_KEPT = {"volume": "volume", "issue": "number", "page": "pages", "edition": "edition",
            "publisher-place": "address", "collection-title": "series", "ISBN": "isbn",
            "ISSN": "issn", "genre": "type", "note": "note", "chapter-number": "chapter"}
#: Who publishes a thesis or a report, in BibTeX's words.
_PUBLISHER = {"phdthesis": "school", "mastersthesis": "school", "techreport": "institution"}


def _looks_like_csl(raw: Mapping[str, object]) -> bool:
    authors = raw.get("author")
    return ("issued" in raw or "container-title" in raw or "citation-key" in raw
            or (isinstance(authors, list) and bool(authors) and isinstance(authors[0], dict)))


def _name(person: object, where: Where) -> str:
    if not isinstance(person, dict):
        raise where.error(f"expected an author object {{family, given}}, got {kind(person)}",
                          "author")
    parts = [person.get(key) for key in ("literal",)] if "literal" in person else \
        [person.get(key) for key in ("given", "non-dropping-particle", "family", "suffix")]
    for part in parts:
        if part is not None and not isinstance(part, str):
            raise where.error(f"expected names as text, got {kind(part)}", "author")
    return collapse(" ".join(part for part in parts if isinstance(part, str)))


def _authors(value: object, where: Where) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(f"expected a list of author objects, got {kind(value)}", "author")
    return [name for name in (_name(person, where) for person in value) if name]


def _year(value: object, where: Where) -> int | None:
    """The year of a CSL date: {date-parts: [[2020, 5]]}, or {raw: "2020-05"}."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise where.error(f"expected a date object {{date-parts}}, got {kind(value)}", "issued")
    parts = value.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        year = parts[0][0]
        if isinstance(year, str):
            return year_in(year, "issued", where)
        if isinstance(year, int) and not isinstance(year, bool):
            return year  # its range is checked with every other year
        raise where.error(f"expected a year in date-parts, got {kind(year)}", "issued")
    for key in ("raw", "literal"):
        text = value.get(key)
        if isinstance(text, str):
            return year_in(text, "issued", where)
    return None


def _venue(raw: Mapping[str, object], where: Where) -> str:
    value = raw.get("container-title")
    if isinstance(value, list):  # some exporters write every CSL title as a list
        value = next((item for item in value if isinstance(item, str)), None)
    return optional_text({"container-title": value}, "container-title", where)


def _number_or_text(raw: Mapping[str, object], key: str, where: Where) -> str:
    """A variable CSL allows as a number or as text (volume, issue, edition)."""
    value = raw.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return optional_text(raw, key, where)


def _month(value: object) -> str:
    """The month of a CSL date {date-parts: [[2020, 5]]} as BibTeX's macro ("may")."""
    parts = value.get("date-parts") if isinstance(value, dict) else None
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and len(parts[0]) > 1:
        return month_name(parts[0][1])
    return ""


def _kept(raw: Mapping[str, object], kind: str, where: Where) -> dict[str, str]:
    found = {field: _number_or_text(raw, name, where) for name, field in CSL_KEPT.items()}
    if kind == "techreport":
        found["number"] = found["number"] or _number_or_text(raw, "number", where)
    found["pages"] = page_range(found["pages"])
    found[_PUBLISHER.get(kind, "publisher")] = optional_text(raw, "publisher", where)
    found["editor"] = " and ".join(_authors(raw.get("editor"), where))
    found["month"] = _month(raw.get("issued"))
    return dict(bib_fields(found))


def _kind(raw: Mapping[str, object], where: Where) -> str:
    """The BibTeX entry type of `type` ('' without one; a master's thesis by `genre`)."""
    given = optional_text(raw, "type", where)
    kind = CSL_TYPES.get(given, "misc") if given else ""
    if kind == "phdthesis" and "master" in _number_or_text(raw, "genre", where).lower():
        return "mastersthesis"
    return kind


def _arxiv_id(raw: Mapping[str, object], where: Where) -> str:
    location = _number_or_text(raw, "archive_location", where)
    return normalise_arxiv_id(location) if location.lower().startswith("arxiv:") else ""


@register_dialect("csl-json", _looks_like_csl)
def csl_record(raw: Mapping[str, object], where: Where) -> dict[str, object]:
    """One CSL item in our record fields."""
    doi = optional_text(raw, "DOI", where)
    kind = _kind(raw, where)
    return {
        "id": raw.get("id"),
        "title": optional_text(raw, "title", where),
        "abstract": optional_text(raw, "abstract", where),
        "authors": _authors(raw.get("author"), where),
        "year": _year(raw.get("issued"), where),
        "venue": _venue(raw, where),
        "url": doi_url(doi) if doi else optional_text(raw, "URL", where),
        "keywords": split_keywords(optional_text(raw, "keyword", where)),
        "arxiv_id": _arxiv_id(raw, where),
        "entry_type": kind,
        "bib_fields": _kept(raw, kind, where),
    }


@register_format("csl-json", (), "CSL-JSON items, as Zotero exports them")
def read_csl_json(path: Path) -> Iterator[Located | Skipped]:
    return read_json_document(path, dialect_named("csl-json"))
