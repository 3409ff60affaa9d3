"""What kind of publication a paper is, and the bibliographic fields it keeps.

Every reader of a bibliographic format names a paper's kind by a BibTeX entry type
(`ENTRY_TYPES`: biblatex's, RIS's TY and CSL's `type` mapped onto them) and keeps the
standard fields our own record has no place for (`KEPT_FIELDS`: publisher, editor,
volume, pages, ...) under their BibTeX names, as plain Unicode text. The BibTeX export
writes them back, so a .bib file read, exported and read again gives the same papers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = [
    "CSL_TYPES",
    "ENTRY_TYPES",
    "KEPT_FIELDS",
    "NAME_FIELDS",
    "RIS_TYPES",
    "bib_fields",
    "entry_type",
]

#: The standard BibTeX entry types: what `Paper.entry_type` holds when it is known.
ENTRY_TYPES = ("article", "book", "booklet", "inbook", "incollection", "inproceedings",
               "manual", "mastersthesis", "misc", "phdthesis", "proceedings", "techreport",
               "unpublished")
#: The standard fields a paper keeps besides its own (title, author, venue, year, ...),
#: in the order the export writes them. `booktitle` is kept only when `journal` gave the
#: venue (an entry with both).
KEPT_FIELDS = ("editor", "booktitle", "series", "volume", "number", "chapter", "pages",
               "edition", "publisher", "organization", "institution", "school", "address",
               "howpublished", "type", "month", "note", "isbn", "issn")
#: Kept fields that are lists of people, held as "First Last and First Last".
NAME_FIELDS = ("editor",)
#: biblatex's names of a kept field, and of entry types BibTeX spells otherwise.
_FIELD_ALIASES = {"location": "address"}
_TYPE_ALIASES = {
    "conference": "inproceedings", "report": "techreport", "thesis": "phdthesis",
    "collection": "book", "mvbook": "book", "mvcollection": "book", "reference": "book",
    "mvproceedings": "proceedings", "inreference": "incollection", "suppbook": "inbook",
    "suppcollection": "incollection",
    "online": "misc", "electronic": "misc", "www": "misc", "software": "misc",
    "dataset": "misc", "periodical": "misc", "patent": "misc", "suppperiodical": "article",
}
#: RIS reference types (TY) as BibTeX entry types; any other is misc.
RIS_TYPES = {
    "JOUR": "article", "JFULL": "article", "EJOUR": "article", "MGZN": "article",
    "NEWS": "article", "INPR": "article", "ABST": "article",
    "BOOK": "book", "EBOOK": "book", "EDBOOK": "book", "CHAP": "incollection",
    "ECHAP": "incollection", "CONF": "inproceedings", "CPAPER": "inproceedings",
    "THES": "phdthesis", "RPRT": "techreport", "UNPB": "unpublished",
    "MANSCPT": "unpublished", "PAMP": "booklet", "STAND": "techreport",
}
#: CSL item types as BibTeX entry types; any other is misc.
CSL_TYPES = {
    "article-journal": "article", "article-magazine": "article",
    "article-newspaper": "article", "article": "article", "review": "article",
    "book": "book", "chapter": "incollection", "paper-conference": "inproceedings",
    "thesis": "phdthesis", "report": "techreport", "manuscript": "unpublished",
    "pamphlet": "booklet", "entry-encyclopedia": "incollection",
    "entry-dictionary": "incollection",
}


def entry_type(name: str, *, thesis_kind: str = "") -> str:
    """The standard BibTeX entry type for an entry type as a .bib file (BibTeX or
    biblatex) spells it: `misc` for one it does not know, '' for none. A biblatex
    `thesis` whose `type` says master's is a `mastersthesis`."""
    name = name.strip().lower()
    if not name:
        return ""
    if name == "thesis" and "master" in thesis_kind.lower():
        return "mastersthesis"
    if name in ENTRY_TYPES:
        return name
    return _TYPE_ALIASES.get(name, "misc")


def bib_fields(values: Mapping[str, str] | Iterable[tuple[str, str]]
               ) -> tuple[tuple[str, str], ...]:
    """The kept fields of `values` (names matched ignoring case, biblatex's aliases
    taken), each as (name, text) with its whitespace collapsed, in `KEPT_FIELDS` order;
    empty ones and fields not kept are left out."""
    pairs = values.items() if isinstance(values, Mapping) else values
    found: dict[str, str] = {}
    for name, value in pairs:
        key = name.strip().lower()
        key = _FIELD_ALIASES.get(key, key)
        text = " ".join(value.split())
        if key in KEPT_FIELDS and text:
            found.setdefault(key, text)
    return tuple((name, found[name]) for name in KEPT_FIELDS if name in found)
