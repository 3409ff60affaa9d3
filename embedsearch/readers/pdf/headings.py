"""Which lines of a body are section headings, figure and table captions, and where the
reference list and the appendices begin.

A heading is a short line set apart from the body text: numbered ("1 Introduction",
"4.1. Results", "III. METHOD", "A.2 Proofs") and larger, bolder or in capitals; or one
of the names papers give their sections ("Related Work", "References") on a line of
its own; or any short line set larger or bolder than the text, without a full stop. A
caption opens with its figure's or table's number and a mark after it ("Figure 3:",
"Table 2.", "Fig. 1 –"), so that "Figure 3 shows ..." in the text is none.
"""

from __future__ import annotations

import re

from .cleaning import BodyStyle
from .layout import Line

__all__ = ["caption", "heading", "named", "not_text", "references", "resumes", "set_apart"]

#: Words a heading has at most (a long section title runs to about a dozen).
_HEADING_WORDS = 14
_HEADING_CHARS = 120
#: A heading is set apart by this much more size than the body (JSS: 12 and 14.3 pt over
#: 10.9; pinp sets its headings 8.8 pt bold over 8.6 pt, which the weight tells apart).
_LARGER = 0.8
#: Numbered headings in capitals may be set smaller than the text (IEEE's small caps).
_CAPITALS_SMALLER = 2.5
_NUMBER = r"(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVXL]{1,6}\.|[A-Z](?:\.\d{1,2}){0,3}\.?)"
_NUMBERED = re.compile(rf"^(?P<number>{_NUMBER})\s+(?P<name>[^\W\d_][^\n]*)$")
_NAMES = re.compile(
    r"^(?:abstract|introduction|background|related work|prior work|preliminaries"
    r"|notation|methods?|methodology|approach|model|experiments?|experimental setup"
    r"|setup|data|datasets?|results|evaluation|analysis|discussion|conclusions?"
    r"|conclusions? and future work|summary|limitations|future work|broader impacts?"
    r"|ethics statement|acknowledge?ments?|references|bibliography|appendix|appendices"
    r"|supplementary material)\W*$", re.IGNORECASE)
_REFERENCES = re.compile(
    r"^(?:[\dIVX]{1,4}\.?\s+)?(?:references?|bibliography|literature cited|works cited"
    r"|cited literature|references and notes)\W*$", re.IGNORECASE)
_APPENDIX = re.compile(r"^(?:appendix|appendices|supplementary|supplemental|online appendix)\b"
                       r"|^[A-Z](?:\.\d{1,2}){0,3}\.?\s+[^\W\d_]", re.IGNORECASE)
_LETTERED = re.compile(r"^[A-Z](?:\.\d{1,2}){0,3}\.?\s")
_CAPTION = re.compile(
    r"^(?P<kind>figure|fig\.?|table|tab\.|algorithm|listing|plate|exhibit)\s*"
    r"(?P<number>[A-Z]?\d{1,3}(?:\.\d{1,3})?[a-z]?|[IVX]{1,5})(?!\w)(?P<mark>\s*[:.|—–-]|\s*$)?",
    re.IGNORECASE)
#: Letters in a heading known only by its type, as a share of its characters.
_WORDED_SHARE = 0.7
# Sections that are no text of the paper: a table of contents, a list of figures, the
# authors' addresses JSS prints at the end ("Affiliation:").
_NOT_TEXT = re.compile(r"^(?:(?:table of )?contents|list of (?:figures|tables)|affiliations?"
                       r"|authors?'? (?:addresses|affiliations|information)"
                       r"|corresponding authors?)\W*$", re.IGNORECASE)
_KINDS = {"fig": "Figure", "fig.": "Figure", "tab.": "Table"}
_ARABIC_POINT = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.\s")


def _capitals(text: str) -> bool:
    letters = [char for char in text if char.isalpha()]
    return len(letters) >= 4 and all(char.isupper() for char in letters)


def _shown(text: str) -> str:
    """A heading as a passage names it: "1. Introduction" is "1 Introduction"."""
    return _ARABIC_POINT.sub(r"\1 ", text)


def set_apart(line: Line, style: BodyStyle) -> bool:
    """Whether `line` is set apart from the body text: larger, or bold where the body
    is not, or in capitals."""
    return line.size >= style.size + _LARGER or (line.bold and not style.bold) or \
        _capitals(line.plain)


def heading(line: Line, style: BodyStyle) -> str | None:
    """The section name `line` heads, or None when it is no heading."""
    text = " ".join(line.plain.split())
    if not text or len(text) > _HEADING_CHARS or len(text.split()) > _HEADING_WORDS \
            or text[-1] in ",;-" or caption(line, style) is not None:
        return None
    if not (text[0].isupper() or text[0].isdigit()):
        return None
    if _NOT_TEXT.match(text) and set_apart(line, style):
        return text  # "Affiliation:" ends with a colon, as no other heading does
    larger = line.size >= style.size + _LARGER
    apart = larger or (line.bold and not style.bold)
    # Where the body reads bold (some fonts report every glyph so), a numbered or named
    # heading may be told by reading regular (R News).
    weighed = apart or line.bold != style.bold
    numbered = _NUMBERED.match(text)
    if numbered and text[-1] != "." and sum(char.isdigit() for char in numbered["name"]) < 4:
        lettered = _LETTERED.match(text) is not None
        if weighed and line.size >= style.size - 0.6 or (
                _capitals(numbered["name"]) and not lettered
                and line.size >= style.size - _CAPITALS_SMALLER):
            return _shown(text)
    name = numbered["name"] if numbered else text
    if _NAMES.match(name) and line.size >= style.size - 0.6 and (
            weighed or _capitals(name) or len(text.split()) <= 4):
        return _shown(text)
    if apart and len(text.split()) <= 10 and text[-1] not in ".:" and not numbered \
            and line.size >= style.size - 0.6 and _worded(text):
        return text
    return None


def _worded(text: str) -> bool:
    """Whether `text` is mostly letters, with a word of three or more: a heading, not
    a formula set large ("M(t|h) = 1")."""
    letters = sum(char.isalpha() for char in text)
    return letters >= _WORDED_SHARE * len(text.replace(" ", "")) and \
        re.search(r"[^\W\d_]{3}", text) is not None


def named(name: str) -> bool:
    """Whether the heading `name` is numbered or one of the usual names of sections,
    rather than known only by its type."""
    found = _NUMBERED.match(name)
    return found is not None or _NAMES.match(name) is not None


def caption(line: Line, style: BodyStyle) -> str | None:
    """"Figure 3" when `line` opens the caption of figure 3, else None. A caption is
    told from a sentence of the text that starts with a figure's name ("Figure 3 shows
    ...") by the mark after its number, or by its own size."""
    found = _CAPTION.match(" ".join(line.plain.split()))
    if found is None:
        return None
    if found["mark"] is None and abs(line.size - style.size) < 0.5:
        return None
    kind = found["kind"].casefold()
    return f"{_KINDS.get(kind, kind.capitalize())} {found['number']}"


def not_text(section: str) -> bool:
    """Whether `section` is no text of the paper (a table of contents, a list of
    figures, the authors' addresses), left out up to the next heading."""
    return _NOT_TEXT.match(section) is not None


def references(section: str) -> bool:
    """Whether `section` is the reference list."""
    return _REFERENCES.match(section) is not None


def resumes(section: str) -> bool:
    """Whether the text resumes at `section` after a reference list: an appendix
    ("Appendix B", "A. Reference card", "Supplementary material"), or a numbered
    section, which in a thesis or a volume of papers is the next chapter's (a paper's
    appendices are set after its references; a chapter's references end the chapter)."""
    return _APPENDIX.match(section) is not None or _NUMBERED.match(section) is not None
