"""A paper's authors among the lines of its first page: the file's metadata when page 1
prints its names, else the lines between the title and the abstract (or first section)
that are names only, a name being two to five capitalised words (particles such as
"van" allowed) with no word of an affiliation, a place or a role.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .fields import TRAILING_MARKS, front_matter_ends, words_of
from .layout import Line

__all__ = ["authors_of"]

_AUTHOR_REGION_LINES = 30  # lines after the title where names are looked for

# Words that mark an affiliation, a placeholder or a role, never a person's name.
_NOT_NAMES = {
    "university", "universität", "universite", "université", "universidad", "università",
    "universiteit", "institute", "institut", "instituto", "department", "dept", "school",
    "college", "faculty", "laboratory", "laboratories", "lab", "labs", "center", "centre",
    "inc", "ltd", "llc", "gmbh", "corporation", "corp", "company", "group", "research",
    "hospital", "academy", "foundation", "board", "council", "ministry", "agency",
    "technology", "sciences", "science", "engineering", "campus", "street", "road",
    "author", "authors", "anonymous", "given", "name", "surname", "submission", "member",
    "fellow", "ieee", "senior", "student", "paper", "abstract", "email", "e-mail",
    "independent", "researcher", "equal", "contribution", "corresponding",
}
_PARTICLES = {"van", "von", "de", "der", "den", "da", "di", "del", "della", "la", "le",
              "du", "dos", "das", "bin", "al", "el", "ter", "ten", "y", "zu"}
_NAME_SPLIT = re.compile(r"\s*(?:,|;|&|·|\band\b|\bund\b|\bet\b|\|)\s*")
_IEEE_GRADE = re.compile(r",?\s*(?:(?:Student|Senior|Life|Associate)\s+)?(?:Member|Fellow)"
                         r",?\s*(?:IEEE|ACM)\b", re.IGNORECASE)
_NAME_PART = re.compile(r"^(?:[A-ZÀ-ÖØ-Þ][\w'’.-]*|[A-Z]\.(?:-?[A-Z]\.)*)$")


def _name(text: str) -> str | None:
    """`text` as a person's name ("Ada Lovelace", "J. R. R. Tolkien", "Jan van Dijk"), or
    None when it is something else (an affiliation, a place, a placeholder)."""
    text = TRAILING_MARKS.sub("", text.strip(" *∗†‡§¶⋆,;")).strip()
    words = text.split()
    if not 2 <= len(words) <= 5 or any(char.isdigit() or char in "@()/:[]" for char in text):
        return None
    if any(word.lower().strip(".") in _NOT_NAMES for word in words):
        return None
    if not all(_NAME_PART.match(word) or word.lower() in _PARTICLES for word in words):
        return None
    return " ".join(words)


def _names(text: str) -> list[str] | None:
    """All names of one line or metadata field, or None if any part is not a name."""
    text = _IEEE_GRADE.sub("", text)
    parts = [part for part in _NAME_SPLIT.split(text) if part.strip(" *∗†‡§¶⋆")]
    names = [_name(part) for part in parts]
    if not names or any(name is None for name in names):
        return None
    return [name for name in names if name is not None]


def authors_of(lines: Sequence[Line], after_title: int, metadata: str
               ) -> tuple[tuple[str, ...], str]:
    """Authors from the metadata when its names are printed on page 1, else from the
    lines between the title and the abstract (or first section) that are names only:
    a line that also holds an affiliation, a place or an email is passed over."""
    page_words = words_of(" ".join(line.text for line in lines))
    listed = _names(metadata) if metadata.strip() else None
    if listed and all(words_of(name.split()[-1]) <= page_words for name in listed):
        return tuple(listed), "metadata"
    found: list[str] = []
    for line in lines[after_title:after_title + _AUTHOR_REGION_LINES]:
        if front_matter_ends(line):
            break
        for name in _names(line.plain) or ():
            if name not in found:
                found.append(name)
    return tuple(found), ("lines between the title and the abstract" if found else "")
