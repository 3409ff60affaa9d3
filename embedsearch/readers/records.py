"""Turning one raw record (a JSON object or a CSV row) into a checked `Paper`.

Every structured format goes through `paper_from_record`, so each field is validated
in one place and its errors read the same whatever the file type. Two layouts are
understood: the one of ../shared/data/papers (authors and keywords as lists, `url`) and
the public paper-list one (`author` and `keywords` as ';'-separated strings, `site`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..papers import Paper, derive_title, derived_title_in
from ..text.bibentry import bib_fields, entry_type
from ..text.identifiers import identifiers_in_url, normalise_arxiv_id, normalise_doi

__all__ = ["RECORD_FIELDS", "Where", "each_paper", "kind", "paper_from_record",
           "papers_from_records"]

#: The fields a record may carry; anything else in a record is ignored.
RECORD_FIELDS = (
    "id", "title", "title_derived", "abstract", "authors", "keywords", "venue", "year", "url",
    "tldr", "primary_area", "doi", "arxiv_id", "collections", "entry_type", "bib_fields",
)
# Public paper lists name some fields differently; the canonical name wins if both exist.
_ALIASES = {"author": "authors", "site": "url"}
_STRING_FIELDS = ("title", "venue", "url", "tldr", "primary_area", "doi", "arxiv_id",
                  "entry_type", "library")
#: An arXiv paper's DataCite DOI names its arXiv id.
_ARXIV_DOI = "10.48550/arxiv."
_LIST_FIELDS = ("authors", "keywords", "collections")
# JSON escapes can spell half of a surrogate pair ("\ud800"), which no UTF-8 store accepts.
_SURROGATE = re.compile("[\ud800-\udfff]")
_DIGITS = re.compile(r"[0-9]+")
#: How a CSV cell (or JSON text) spells a yes/no field; ours write true/false.
_FLAGS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}


class Where:
    """Where a record came from, to raise errors that point at it."""

    def __init__(self, path: Path, line: int | None, record: int | None) -> None:
        self.path, self.line, self.record = path, line, record

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(
            message, path=self.path, line=self.line, record=self.record, field=field
        )


def kind(value: object) -> str:
    """How a JSON value is named in an error message ("a number", "a list")."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _text(value: object, name: str, where: Where) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise where.error(f"expected text, got {kind(value)}", name)
    _check_encodable(value, name, where)
    return value.strip()


def _check_encodable(value: str, name: str, where: Where) -> None:
    bad = _SURROGATE.search(value)
    if bad:
        raise where.error(f"holds an unpaired UTF-16 surrogate (\\u{ord(bad.group()):04x} at "
                          f"character {bad.start() + 1}); it cannot be stored as text", name)


def _string_list(value: object, name: str, where: Where) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        _check_encodable(value, name, where)
        items = value.split(";")
    elif isinstance(value, list):
        items = value
        for item in items:
            if not isinstance(item, str):
                raise where.error(f"expected a list of text, found {kind(item)}", name)
            _check_encodable(item, name, where)
    else:
        raise where.error(f"expected a list or a ';'-separated text, got {kind(value)}", name)
    return tuple(item.strip() for item in items if item.strip())


def _bib_fields(value: object, where: Where) -> tuple[tuple[str, str], ...]:
    """The kept bibliographic fields of an object {name: text} (numbers, such as a
    volume, as text); names not in `bibentry.KEPT_FIELDS` are ignored."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise where.error(f"expected an object of field names and texts, got {kind(value)}",
                          "bib_fields")
    texts: dict[str, str] = {}
    for name, item in value.items():
        if isinstance(item, int) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(name, str) or not isinstance(item, str):
            raise where.error(f"expected text for field {name!r}, got {kind(item)}",
                              "bib_fields")
        _check_encodable(item, "bib_fields", where)
        texts[name] = item
    return bib_fields(texts)


def _flag(value: object, name: str, where: Where) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _FLAGS:
        return _FLAGS[value.strip().lower()]
    raise where.error(f"expected true or false, got {str(value)[:20]!r}", name)


def _title(given: str, abstract: str, flag: object, where: Where) -> tuple[str, bool]:
    """(title, derived): a title cut from the abstract stays marked so, whether the
    record says it (`title_derived`, as our JSON lines and CSV write it) or cites it in
    brackets (`papers.cited_title`, as our BibTeX, RIS and CSL-JSON do); read back as a
    real title, the next export cited the abstract's opening as the paper's title."""
    if not given:
        return derive_title(abstract), True
    cited = derived_title_in(given, abstract)
    if cited is not None:
        return cited, True
    return given, bool(abstract) and _flag(flag, "title_derived", where)


def _year(value: object, where: Where) -> int | None:
    if value is None or value == "":
        return None
    # ASCII digits only: str.isdigit() admits "²", which int() refuses; and no int() of a
    # long run of them, which meets Python's 4300-digit limit.
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        digits = value.strip()
        if len(digits) > 4:
            raise where.error(f"expected a four-digit year, got {digits[:20]}"
                              f"{'…' if len(digits) > 20 else ''}", "year")
        value = int(digits)
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"expected a year such as 2025, got {value!r}", "year")
    if not 1000 <= value <= 9999:
        raise where.error(f"expected a four-digit year, got {value}", "year")
    return value


def _identifier(value: object, default: str, where: Where) -> str:
    if value is None or value == "":
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise where.error(f"expected text or an integer, got {kind(value)}", "id")
    _check_encodable(value, "id", where)
    if not value.strip():
        return default
    return value.strip()


def _identifiers(text: dict[str, str], where: Where) -> tuple[str, str]:
    """(DOI, arXiv id) of a record: its own fields (refused when they are not one), else
    what its URL gives; an arXiv DOI gives the arXiv id too."""
    doi = normalise_doi(text["doi"])
    if text["doi"] and not doi:
        raise where.error(f"expected a DOI such as 10.1000/xyz, got {text['doi'][:60]!r}",
                          "doi")
    arxiv = normalise_arxiv_id(text["arxiv_id"])
    if text["arxiv_id"] and not arxiv:
        raise where.error(f"expected an arXiv id such as 2401.01234, got "
                          f"{text['arxiv_id'][:60]!r}", "arxiv_id")
    from_url = identifiers_in_url(text["url"])
    doi = doi or from_url[0]
    if not arxiv and doi.startswith(_ARXIV_DOI):
        arxiv = normalise_arxiv_id(doi.removeprefix(_ARXIV_DOI))
    return doi, arxiv or from_url[1]


def paper_from_record(
    raw: Mapping[str, object],
    *,
    default_id: str,
    path: Path,
    line: int | None = None,
    record: int | None = None,
    title_only: bool = False,
) -> Paper:
    """Validate `raw` and build its Paper; errors name the file, line/record and field.

    `title_only`: a record without an abstract but with a title (a bibliography entry)
    becomes a title-only paper (`Paper.title_only`) instead of an error.
    """
    where = Where(path, line, record)
    fields = {_ALIASES.get(key, key): value for key, value in raw.items() if key in _ALIASES}
    fields.update({key: value for key, value in raw.items() if key not in _ALIASES})
    text = {name: _text(fields.get(name), name, where) for name in _STRING_FIELDS}
    abstract = _text(fields.get("abstract"), "abstract", where)
    if not abstract and not (title_only and text["title"]):
        if title_only:
            raise where.error("needs an abstract or, for an entry known by its title, a "
                              "title", "abstract")
        if "abstract" not in fields:
            raise where.error("missing the required field 'abstract'")
        raise where.error("is empty; every paper needs an abstract", "abstract")
    lists = {name: _string_list(fields.get(name), name, where) for name in _LIST_FIELDS}
    doi, arxiv_id = _identifiers(text, where)
    title, derived = _title(text["title"], abstract, fields.get("title_derived"), where)
    return Paper(
        id=_identifier(fields.get("id"), default_id, where),
        abstract=abstract,
        title=title,
        title_derived=derived,
        authors=lists["authors"],
        keywords=lists["keywords"],
        venue=text["venue"],
        year=_year(fields.get("year"), where),
        url=text["url"],
        tldr=text["tldr"],
        primary_area=text["primary_area"],
        doi=doi,
        arxiv_id=arxiv_id,
        collections=lists["collections"],
        entry_type=entry_type(text["entry_type"]),
        bib_fields=_bib_fields(fields.get("bib_fields"), where),
        library=text["library"],
    )


def papers_from_records(papers: Iterable[Paper | Mapping[str, Any]], *,
                        title_only: bool = False) -> list[Paper]:
    """Papers as given, or built (and validated) from plain mappings; `title_only`: a
    mapping with a title but no abstract is a title-only paper, not an error."""
    return list(each_paper(papers, title_only=title_only))


def each_paper(papers: Iterable[Paper | Mapping[str, Any]], *,
               title_only: bool = False) -> Iterator[Paper]:
    """`papers_from_records`, one paper at a time as `papers` yields them."""
    for number, item in enumerate(papers, 1):
        if isinstance(item, Paper):
            yield item
        elif isinstance(item, Mapping):
            yield paper_from_record(item, default_id=f"record:{number}", path=Path("<records>"),
                                    record=number, title_only=title_only)
        else:
            raise InputError(f"expected a Paper or a mapping, got {type(item).__name__}",
                             path="<records>", record=number)
