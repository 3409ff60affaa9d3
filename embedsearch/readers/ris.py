"""RIS (`.ris`), the tagged format of EndNote, Zotero, Scopus and most databases.

The file is split into entries ("TY  -" ... "ER  -") as it streams, so an error names
the line an entry starts on, and each entry's tags are parsed by rispy. `ris_record`
maps them onto our record fields: AB (else N2) -> abstract, TI (else T1) -> title,
AU and A1 -> authors ("Last, First" as "First Last"), PY (else Y1, DA) -> year,
venue from the first of T2, JO, JF, J2, JA, BT, then PB as a last resort but for a
book, a thesis or a report, which PB published (exporters
disagree: Zotero writes T2, EndNote JO or JF, PubMed JO and JA, and a PMLR paper may
carry only its publisher), KW -> keywords, DO -> url https://doi.org/..., else the first
UR, ID -> id (else one derived from the file and position), TY -> the BibTeX entry
type (`bibentry.RIS_TYPES`), and the other standard fields kept under their BibTeX
names (`RIS_KEPT`: PB the publisher, or a thesis's school, a report's institution;
SP and EP the pages; SN the ISBN of a book or chapter, else the ISSN; N1 the note; DA's
month the month; M3 of a thesis saying "master" makes it a mastersthesis), AN
"arXiv:ID" (where Zotero keeps a preprint's arXiv id, as our RIS export does) the
arXiv id. An entry without an
abstract becomes a title-only paper (see `foreign`); one cut short (no 'ER  -' before
the next 'TY  -' or the end) is skipped and named, and the rest read; lines outside any
entry (an export's header) are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..text.bibentry import RIS_TYPES, bib_fields, month_name
from ..text.identifiers import normalise_arxiv_id
from .base import Located, Skipped, iter_lines, register_format
from .foreign import Converted, collapse, doi_url, first_last, foreign_papers, split_keywords
from .records import Where

__all__ = ["RIS_FIELDS", "read_ris", "ris_record"]

#: Our record field -> rispy's names of the RIS tags it is read from, first present wins.
RIS_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id",),                                        # ID
    "title": ("title", "primary_title"),                  # TI, T1
    "abstract": ("abstract", "notes_abstract"),           # AB, N2
    "authors": ("authors", "first_authors"),              # AU, A1
    "year": ("year", "publication_year", "date"),         # PY, Y1, DA
    "venue": ("secondary_title", "journal_name", "alternate_title3", "alternate_title1",
              "alternate_title2", "BT", "publisher"),     # T2, JO, JF, J2, JA, BT, PB
    "keywords": ("keywords",),                            # KW
    "url": ("doi", "urls"),                               # DO, UR
}

#: The BibTeX field each kept RIS tag (rispy's name) gives; PB and SN depend on the type.
RIS_KEPT: dict[str, str] = {
    "volume": "volume", "number": "number", "edition": "edition",    # VL, IS, ET
    "place_published": "address", "tertiary_title": "series",         # CY, T3
    "type_of_work": "type", "notes": "note",                          # M3, N1
}
#: Who publishes a thesis or a report, in BibTeX's words.
_PUBLISHER = {"phdthesis": "school", "mastersthesis": "school", "techreport": "institution"}
_ISBN_TYPES = ("book", "incollection", "inbook")
#: Kinds whose PB is who published them, never a stand-in for a venue they lack.
_PUBLISHED = ("book", "booklet", "manual", "proceedings", "phdthesis", "mastersthesis",
              "techreport")
_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: |$)")
_LEADING_YEAR = re.compile(r"\s*([0-9]{4})")
_DATE_MONTH = re.compile(r"\s*[0-9]{4}/([0-9]{1,2})\b")


def _texts(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [collapse(item) for item in items if isinstance(item, str) and item.strip()]


def _first(entry: Mapping[str, object], names: tuple[str, ...]) -> str:
    return next((texts[0] for name in names if (texts := _texts(entry.get(name)))), "")


def _year(entry: Mapping[str, object]) -> str | None:
    """The leading year of "2020/05/01/" as written, so that "abc" is refused as a year."""
    text = _first(entry, RIS_FIELDS["year"])
    match = _LEADING_YEAR.match(text)
    return match.group(1) if match else (text or None)


def _pages(entry: Mapping[str, object]) -> str:
    """SP and EP as BibTeX writes a range ("12--20"); SP alone as written."""
    start, end = _first(entry, ("start_page",)), _first(entry, ("end_page",))
    return f"{start}--{end}" if start and end and start != end else start or end


def _kept(entry: Mapping[str, object], kind: str) -> dict[str, str]:
    """The standard fields besides ours, by their BibTeX names (see `RIS_KEPT`)."""
    unknown = entry.get("unknown_tag")
    editors = [*_texts(entry.get("secondary_authors")),
               *(_texts(unknown.get("ED")) if isinstance(unknown, Mapping) else [])]
    found = {field: _first(entry, (name,)) for name, field in RIS_KEPT.items()}
    found[_PUBLISHER.get(kind, "publisher")] = _first(entry, ("publisher",))
    found["isbn" if kind in _ISBN_TYPES else "issn"] = _first(entry, ("issn",))
    found["pages"] = _pages(entry)
    found["editor"] = " and ".join(first_last(name) for name in editors)
    month = _DATE_MONTH.match(_first(entry, ("date", "publication_year")))
    found["month"] = month_name(month.group(1)) if month else ""
    return dict(bib_fields(found))


def _kind(entry: Mapping[str, object]) -> str:
    """The BibTeX entry type of TY (a thesis whose M3 says master's a mastersthesis)."""
    kind = RIS_TYPES.get(_first(entry, ("type_of_reference",)).upper(), "misc")
    if kind == "phdthesis" and "master" in _first(entry, ("type_of_work",)).lower():
        return "mastersthesis"
    return kind


def _arxiv_id(entry: Mapping[str, object]) -> str:
    """The arXiv id of AN when it names one ("arXiv:2401.01234"), else ''."""
    number = _first(entry, ("accession_number",))
    return normalise_arxiv_id(number) if number.lower().startswith("arxiv:") else ""


def ris_record(entry: Mapping[str, object]) -> dict[str, object]:
    """One entry as rispy parses it (tag names as in rispy's mapping) as our record."""
    unknown = entry.get("unknown_tag")
    if isinstance(unknown, Mapping) and "BT" in unknown:  # rispy has no name for BT
        entry = {**entry, "BT": unknown["BT"]}
    doi = _first(entry, ("doi",))
    authors = [first_last(name) for key in RIS_FIELDS["authors"] for name in _texts(entry.get(key))]
    keywords = [word for text in _texts(entry.get("keywords")) for word in split_keywords(text)]
    kind = _kind(entry)
    return {
        "id": _first(entry, RIS_FIELDS["id"]) or None,
        "title": _first(entry, RIS_FIELDS["title"]),
        "abstract": _first(entry, RIS_FIELDS["abstract"]),
        "authors": authors,
        "year": _year(entry),
        "venue": _first(entry, RIS_FIELDS["venue"][:-1] if kind in _PUBLISHED else
                        RIS_FIELDS["venue"]),
        "keywords": keywords,
        "url": doi_url(doi) if doi else _first(entry, ("urls",)),
        "arxiv_id": _arxiv_id(entry),
        "entry_type": kind,
        "bib_fields": _kept(entry, kind),
    }


def _chunks(path: Path) -> Iterator[tuple[int, list[str]] | Skipped]:
    """(line of its TY tag, lines) of each entry, one entry in memory at a time; an
    entry cut short is `Skipped`, and reading goes on at the next TY."""
    start, lines = 0, list[str]()
    for number, raw in iter_lines(path):
        text = raw.rstrip("\r\n")
        tag = _TAG.match(text)
        if tag and tag.group(1) == "TY":
            if lines:
                yield _cut_short(path, start, lines, f"no 'ER  -' end before the next "
                                                     f"'TY  -' on line {number}")
            start, lines = number, [text]
        elif lines:
            lines.append(text)
            if tag and tag.group(1) == "ER":
                yield start, lines
                lines = []
    if lines:
        yield _cut_short(path, start, lines, "no 'ER  -' end before the end of the file")


def _cut_short(path: Path, start: int, lines: list[str], why: str) -> Skipped:
    """A malformed entry, named by its ID or title if a line gives one."""
    names = [line[6:].strip() for line in lines if line[:2] in ("ID", "TI", "T1")]
    label = f"{names[0][:60]} (line {start})" if names else f"line {start}"
    return Skipped(path, start, label, f"malformed RIS entry: {why}", malformed=True)


def _parse(lines: list[str]) -> dict[str, Any]:
    import rispy

    parsed = rispy.RisParser().parse_lines(iter(lines))
    return parsed[0] if parsed else {}


def _entries(path: Path) -> Iterator[Converted | Skipped]:
    for chunk in _chunks(path):
        if isinstance(chunk, Skipped):
            yield chunk
            continue
        line, lines = chunk
        record = ris_record(_parse(lines))
        name = record.get("id")
        yield record, Where(path, line, None), f"{name} (line {line})" if name else f"line {line}"


@register_format("ris", (".ris",), "RIS entries, as reference managers export them")
def read_ris(path: Path) -> Iterator[Located | Skipped]:
    return foreign_papers(path, _entries(path))
