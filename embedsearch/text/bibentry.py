"""What kind of publication a paper is, and the bibliographic fields it keeps.

Every reader of a bibliographic format names a paper's kind by a BibTeX entry type
(`ENTRY_TYPES`: biblatex's, RIS's TY, CSL's `type` and Zotero's item types mapped onto
them, and back by
`ris_type` and `csl_type` for the RIS and CSL-JSON exports) and keeps the
standard fields our own record has no place for (`KEPT_FIELDS`: publisher, editor,
volume, pages, ...) under their BibTeX names, as plain Unicode text. The BibTeX export
writes them back, so a .bib file read, exported and read again gives the same papers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = [
    "CSL_TYPES",
    "ENTRY_TYPES",
    "KEPT_FIELDS",
    "NAME_FIELDS",
    "RIS_TYPES",
    "ZOTERO_TYPES",
    "bib_fields",
    "csl_type",
    "entry_type",
    "family_given",
    "guessed_type",
    "month_name",
    "month_number",
    "page_range",
    "people",
    "ris_type",
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
    "article-newspaper": "article", "review": "article",
    "book": "book", "chapter": "incollection", "paper-conference": "inproceedings",
    "thesis": "phdthesis", "report": "techreport", "manuscript": "unpublished",
    "pamphlet": "booklet", "entry-encyclopedia": "incollection",
    "entry-dictionary": "incollection",
}

#: Zotero's item types (its schema's names) as BibTeX entry types; any other is misc
#: (a preprint, a web page, a dataset: `csl_type` makes one with an arXiv id a preprint).
ZOTERO_TYPES = {
    "journalArticle": "article", "magazineArticle": "article",
    "newspaperArticle": "article", "conferencePaper": "inproceedings", "book": "book",
    "bookSection": "incollection", "encyclopediaArticle": "incollection",
    "dictionaryEntry": "incollection", "thesis": "phdthesis", "report": "techreport",
    "manuscript": "unpublished",
}
# Two page numbers joined by a hyphen or an en dash.
_PAGE_RANGE = re.compile(r"^\s*(\S+?)\s*[-\u2013]\s*(\S+)\s*$")


#: A BibTeX entry type as a RIS type (what Zotero writes for its item types); a type RIS
#: has no name for is GEN, its generic one. inbook and incollection are both chapters,
#: and a proceedings volume a conference (RIS cannot tell them apart).
_TO_RIS = {"article": "JOUR", "book": "BOOK", "booklet": "PAMP", "inbook": "CHAP",
           "incollection": "CHAP", "inproceedings": "CONF", "proceedings": "CONF",
           "mastersthesis": "THES", "phdthesis": "THES", "techreport": "RPRT",
           "unpublished": "UNPB"}
#: A BibTeX entry type as a CSL type; `document` is CSL's generic one, and `article` its
#: preprint ("a preprint, working paper, or other unpublished article"), which is what a
#: misc entry with an arXiv id is.
_TO_CSL = {"article": "article-journal", "book": "book", "booklet": "pamphlet",
           "inbook": "chapter", "incollection": "chapter", "inproceedings": "paper-conference",
           "proceedings": "book", "mastersthesis": "thesis", "phdthesis": "thesis",
           "techreport": "report", "unpublished": "manuscript"}
#: A venue named like a journal is cited as one; everything else as proceedings.
_JOURNAL = re.compile(r"journal|transactions|letters|review|magazine|arxiv", re.IGNORECASE)
#: Lower-case words that start a family name ("van der Berg", "de la Cruz").
_PARTICLES = frozenset(("van", "von", "der", "den", "de", "del", "della", "di", "da", "du",
                        "la", "le", "ter", "ten", "dos", "das", "zu", "af", "bin", "al"))
_SUFFIXES = frozenset(("jr", "jr.", "sr", "sr.", "ii", "iii", "iv"))
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                "dec")


def guessed_type(entry_type: str, venue: str) -> str:
    """A paper's entry type: its own, else a guess from its venue (misc without one)."""
    if entry_type:
        return entry_type
    return "misc" if not venue else "article" if _JOURNAL.search(venue) else "inproceedings"


def page_range(text: str) -> str:
    """Pages as BibTeX writes a range ("12-20" and "12–20" as "12--20"); other text,
    and a range written so already, as it is."""
    return text if "--" in text else _PAGE_RANGE.sub(r"\1--\2", text)


def people(value: str) -> list[str]:
    """The names of a kept list of people (`NAME_FIELDS`), held as "First Last and First
    Last" as the readers join them."""
    return [name for name in value.split(" and ") if name.strip()]


def ris_type(kind: str) -> str:
    """The RIS type (TY) of a BibTeX entry type; GEN, the generic one, for any other."""
    return _TO_RIS.get(kind, "GEN")


def csl_type(kind: str, *, preprint: bool = False) -> str:
    """The CSL type of a BibTeX entry type; a misc entry that is a `preprint` (it has an
    arXiv id) is CSL's `article`, any other type CSL's generic `document`."""
    if kind == "misc" and preprint:
        return "article"
    return _TO_CSL.get(kind, "document")


def family_given(name: str) -> tuple[str, str, str]:
    """(family, given, suffix) of a name held as "Given Family" ("Zoë van der Berg" is
    ("van der Berg", "Zoë", ""), "John Smith Jr." ("Smith", "John", "Jr.")); a
    one-word name is a family name alone. What RIS writes as "Family, Given" and CSL as
    {family, given}; our readers join them back into the same text."""
    words = name.split()
    suffix = words.pop() if len(words) > 2 and words[-1].lower() in _SUFFIXES else ""
    if len(words) < 2:
        return " ".join(words), "", suffix
    start = len(words) - 1
    while start > 1 and words[start - 1] in _PARTICLES:
        start -= 1
    return " ".join(words[start:]), " ".join(words[:start]), suffix


def month_number(text: str) -> int | None:
    """The month (1-12) of a BibTeX month ("mar", "March", "3"), None for any other text."""
    text = text.strip().lower()
    if text.isdigit() and 1 <= int(text) <= 12:
        return int(text)
    return _MONTH_NAMES.index(text[:3]) + 1 if text[:3] in _MONTH_NAMES else None


def month_name(number: object) -> str:
    """The BibTeX month macro ("mar") of a month number, '' for anything else: how the
    RIS and CSL-JSON readers keep a date's month."""
    if isinstance(number, str) and number.strip().isdigit():
        number = int(number)
    if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= 12:
        return _MONTH_NAMES[number - 1]
    return ""


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
