"""Hits or papers as RIS, the tagged format Zotero, EndNote and Mendeley import.

Written by rispy's writer, as our RIS reader (`readers.ris`) reads it back: TY the type
(`bibentry.ris_type`: JOUR, CONF, CHAP, BOOK, THES, RPRT, UNPB, ..., GEN for any other),
ID the paper id, TI, AU "Family, Given" for each author, PY the year and DA the date
with its month, T2 the venue, AB, KW one per keyword, DO the bare DOI, UR the URL, the
arXiv id as Zotero keeps a preprint's (DB arXiv, AN arXiv:ID: "Archive" and "Loc. in
Archive"), and the standard fields the paper keeps under the tags Zotero uses for them
(A2 editors, VL, IS, SP/EP, ET, PB publisher or school or institution, CY, T3, M3, SN,
N1). Every value is one line: RIS has no way to continue one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import DependencyError
from ..papers import Paper, cited_title
from ..search.results import Hit
from ..text.bibentry import family_given, guessed_type, month_number, people, ris_type
from .common import papers_of

__all__ = ["to_ris"]

#: Kept fields (BibTeX names) -> rispy's name of the RIS tag that carries them.
_TAGS = {"volume": "volume", "number": "number", "edition": "edition",
         "address": "place_published", "series": "tertiary_title", "type": "type_of_work",
         "publisher": "publisher", "school": "publisher", "institution": "publisher",
         "isbn": "issn", "issn": "issn"}
#: What a master's thesis says of itself, so that it is not read as a PhD thesis.
MASTERS = "Master's thesis"


def _line(text: str) -> str:
    return " ".join(text.split())


def _person(name: str) -> str:
    """"Family, Given" (or "Family, Suffix, Given"), as RIS writes a name."""
    family, given, suffix = family_given(_line(name))
    return ", ".join(part for part in (family, suffix, given) if part)


def _pages(text: str) -> tuple[str, str]:
    """(SP, EP) of a BibTeX page range ("12--20"); any other text (one page, "12-20",
    "e1234") whole as SP, which the reader gives back as it was."""
    start, sep, end = text.partition("--")
    return (start.strip(), end.strip()) if sep and start.strip() and end.strip() else (text, "")


def ris_entry(paper: Paper) -> dict[str, Any]:
    """One paper as rispy's record of RIS tags (its names for them)."""
    kind = guessed_type(paper.entry_type, paper.venue)
    kept = dict(paper.bib_fields)
    entry: dict[str, Any] = {"type_of_reference": ris_type(kind), "id": paper.id,
                             "title": _line(cited_title(paper))}
    if paper.authors:
        entry["authors"] = [_person(name) for name in paper.authors]
    if "editor" in kept:
        entry["secondary_authors"] = [_person(name) for name in people(kept["editor"])]
    if paper.year:
        month = month_number(kept.get("month", ""))
        entry["year"] = str(paper.year)
        entry["date"] = f"{paper.year}/{month:02d}//" if month else f"{paper.year}///"
    if paper.venue:
        entry["secondary_title"] = _line(paper.venue)
    for name, tag in _TAGS.items():
        if name in kept:
            entry.setdefault(tag, kept[name])
    if kind == "mastersthesis":
        entry.setdefault("type_of_work", MASTERS)
    if "pages" in kept:
        start, end = _pages(kept["pages"])
        entry["start_page"] = start
        if end:
            entry["end_page"] = end
    if paper.abstract:
        entry["abstract"] = _line(paper.abstract)
    if paper.keywords:
        entry["keywords"] = [_line(word) for word in paper.keywords]
    if paper.doi:
        entry["doi"] = paper.doi
    if paper.url:
        entry["urls"] = [paper.url]
    if paper.arxiv_id:
        entry["name_of_database"] = "arXiv"
        entry["accession_number"] = f"arXiv:{paper.arxiv_id}"
    if "note" in kept:
        entry["notes"] = [kept["note"]]
    return entry


def to_ris(items: Iterable[Hit | Paper]) -> str:
    """An .ris file's text: one entry per paper of `items` (hits or papers), in order,
    each paper once."""
    try:
        from rispy import RisWriter
    except ImportError:
        raise DependencyError("RIS export needs rispy, which is not installed: "
                              "pip install 'rispy>=0.10,<1'") from None
    class _Writer(RisWriter):  # type: ignore[misc]
        def set_header(self, count: int) -> str:
            return ""  # rispy numbers entries ("1."); RIS itself has no such line

    return str(_Writer().formats([ris_entry(paper) for paper in papers_of(items)]))
