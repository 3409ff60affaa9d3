"""Hits or papers as BibTeX, written by bibtexparser 2's writer.

Each paper under its entry type (@book, @phdthesis, ...; guessed from the venue only when
the source did not say) with every standard field it keeps (publisher, editor, pages, ...
`Paper.bib_fields`), each value LaTeX-encoded by pylatexenc (what bibtexparser's own
encoding middleware uses) so that `&`, `%` and braces neither break the file nor the
LaTeX run that cites it. Text is Unicode in every field by default (biber, and LaTeX
since 2018, read UTF-8); `latex=True` spells every character that has a LaTeX escape in
it, in every field, for classic BibTeX. Our reader reads either back as the same papers.
The citation key is the paper id when the id is a valid key (so re-reading the file
gives back the same ids), else the id made safe plus a short hash of it: the same paper
always gets the same key, and two ids never share one.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import DependencyError
from ..papers import Paper, cited_title
from ..search.results import Hit
from ..text.bibentry import NAME_FIELDS, guessed_type, people
from ..text.latex import latex_to_text
from .common import citation_key, papers_of

__all__ = ["to_bibtex"]

# Words with a capital after their first letter (LoRA, GPT-4, ImageNet) are braced so
# that BibTeX styles which lower-case titles leave them as written.
_KEEP_CASE = re.compile(r"(?<![\w{\\])([A-Za-z0-9]+[A-Z][\w-]*)")
# A name with " and " in it (a company): braced, or BibTeX would split it in two.
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: Entry types whose venue is the book they are in (booktitle), not a journal.
_IN_BOOK = ("inproceedings", "incollection", "inbook", "proceedings")
#: Entry types whose venue is how they were published: biblatex has no journal for them.
_HOW_PUBLISHED = ("misc", "booklet", "unpublished")
#: Entry types biblatex requires an author for, among those guessed from a venue.
_NEEDS_AUTHOR = ("article", "inproceedings")
#: Fields where "--" is a range (BibTeX's en dash), not two hyphens typed.
_RANGES = ("pages",)
# LaTeX's special characters, and < > (which OT1 fonts print as ¡ ¿).
_SPECIALS = {ord(char): latex for char, latex in {
    "\\": r"{\textbackslash}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$", "%": r"\%",
    "&": r"\&", "_": r"\_", "~": r"{\textasciitilde}", "^": r"{\textasciicircum}",
    "<": r"\ensuremath{<}", ">": r"\ensuremath{>}"}.items()}


class _Latex:
    """LaTeX-encode a value with pylatexenc: math ($...$) kept as written, LaTeX's special
    characters escaped (so that no value breaks the file or the LaTeX run), and the rest
    of Unicode kept as UTF-8, which biber and LaTeX read and which reads back exactly.
    `escapes`: every other character that has a LaTeX spelling our reader turns back
    into it is spelt so too ({\\'e}, {\\textendash}), for BibTeX without UTF-8 (which
    abbreviates first names byte by byte); "ﬁ" or "−" stay UTF-8, as their spelling
    would come back as "fi" and "-". A value whose kept math would leave braces
    unbalanced is encoded whole instead, $ included. `dashes=False` (page ranges) writes
    "--" as BibTeX's en dash instead of as two hyphens."""

    def __init__(self, *, escapes: bool = False) -> None:
        from pylatexenc.latexencode import (
            RULE_CALLABLE,
            RULE_DICT,
            RULE_REGEX,
            UnicodeToLatexConversionRule,
            UnicodeToLatexEncoder,
        )

        keep_math = UnicodeToLatexConversionRule(rule_type=RULE_CALLABLE, rule=_math_span)
        # "--", "``" and "''" stay as typed (LaTeX would print a dash or curly quotes).
        dashes = UnicodeToLatexConversionRule(rule_type=RULE_REGEX, rule=[
            (re.compile(r"-(?=-)"), "-{}"), (re.compile(r"'(?=')"), "'{}"),
            (re.compile(r"`"), "{`}")])
        specials = UnicodeToLatexConversionRule(rule_type=RULE_DICT, rule=_SPECIALS)
        spelt = [UnicodeToLatexConversionRule(rule_type=RULE_CALLABLE, rule=_escape)] \
            if escapes else []
        options = {"unknown_char_policy": "keep", "unknown_char_warning": False}
        self._encoders = {
            (math, keep_dashes): UnicodeToLatexEncoder(conversion_rules=[
                *([keep_math] if math else []), *([dashes] if keep_dashes else []),
                specials, *spelt], **options)
            for math in (True, False) for keep_dashes in (True, False)}

    def __call__(self, text: str, *, dashes: bool = True) -> str:
        encoded: str = self._encoders[True, dashes].unicode_to_latex(text)
        if not _balanced(encoded):
            encoded = self._encoders[False, dashes].unicode_to_latex(text)
        return encoded


@functools.cache
def _spelling() -> Any:
    """pylatexenc's encoder of one character to its LaTeX spelling, braced whole."""
    from pylatexenc.latexencode import UnicodeToLatexEncoder

    return UnicodeToLatexEncoder(conversion_rules=["defaults"], unknown_char_policy="keep",
                                 unknown_char_warning=False,
                                 replacement_latex_protection="braces-all")


@functools.cache
def _spelt(char: str) -> str | None:
    """`char`'s LaTeX spelling if our reader reads it back as `char`, else None."""
    spelling: str = _spelling().unicode_to_latex(char)
    return spelling if spelling != char and latex_to_text(spelling) == char else None


def _escape(text: str, start: int) -> tuple[int, str] | None:
    """(1, spelling) for a non-ASCII character that has a LaTeX spelling (see `_spelt`)."""
    if ord(text[start]) < 128:
        return None
    spelling = _spelt(text[start])
    return (1, spelling) if spelling else None


def _math_span(text: str, start: int) -> tuple[int, str] | None:
    """(length, itself) of the math ($...$) starting at `start`, to keep it as written: it
    ends at the first unescaped $ outside the braces it opens, so $\\textbf{2$\\times$}$
    is one span. None where no math starts, or it never ends."""
    if text[start] != "$" or (start and text[start - 1] == "\\"):
        return None
    depth, position = 0, start + 1
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char in "{}":
            depth += 1 if char == "{" else -1
        elif char == "$" and depth == 0:
            span = text[start : position + 1]
            return (len(span), span) if len(span) > 2 else None
        position += 1
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for match in re.finditer(r"\\.|[{}]", text):
        token = match.group(0)
        if token in "{}":
            depth += 1 if token == "{" else -1
            if depth < 0:
                return False
    return depth == 0


def _title(encoded: str) -> str:
    parts = re.split(r"(\$[^$]*\$)", encoded)  # never brace inside math
    return "".join(part if part.startswith("$") else _KEEP_CASE.sub(r"{\1}", part)
                   for part in parts)


def _names(value: Iterable[str], encode: _Latex) -> str:
    """People as BibTeX lists them: " and " between names, a name holding " and " (a
    company) braced whole so that it stays one."""
    names = (" ".join(name.split()) for name in value)
    return " and ".join(f"{{{encode(name)}}}" if _AND.search(name) else encode(name)
                        for name in names if name)


def _kept(paper: Paper, encode: _Latex) -> list[Any]:
    """The paper's other standard fields (`bib_fields`) as written: a month named by its
    abbreviation as BibTeX's macro (styles print it in full), pages with an en dash."""
    from bibtexparser import model

    fields = []
    for name, value in paper.bib_fields:
        if name in NAME_FIELDS:
            fields.append(model.Field(name, _names(people(value), encode)))
        elif name == "month" and value.lower() in _MONTHS:
            fields.append(model.Field(name, value.lower(), enclosing="no-enclosing"))
        else:
            fields.append(model.Field(name, encode(value, dashes=name not in _RANGES)))
    return fields


def _entry_type(paper: Paper) -> str:
    """The paper's own entry type; else a guess from its venue, but never one biblatex
    requires an author for (article, inproceedings) when the paper has none: a conference
    abstract without its authors is a valid @misc, an @inproceedings is not."""
    kind = guessed_type(paper.entry_type, paper.venue)
    if not paper.entry_type and not paper.authors and kind in _NEEDS_AUTHOR:
        return "misc"
    return kind


def _venue_field(kind: str, kept: Mapping[str, str]) -> str:
    """Where the venue is written, among the fields the reader takes it from: booktitle
    for a part of a book or proceedings, howpublished for what biblatex gives no journal
    (misc, booklet, unpublished), journal otherwise, and journal wherever the paper keeps
    that other field of its own."""
    if kind in _IN_BOOK and "booktitle" not in kept:
        return "booktitle"
    if kind in _HOW_PUBLISHED and "howpublished" not in kept:
        return "howpublished"
    return "journal"


def _entry(paper: Paper, encode: _Latex) -> Any:
    from bibtexparser import model

    kind = _entry_type(paper)
    venue = _venue_field(kind, dict(paper.bib_fields))
    values: list[tuple[str, str]] = [
        ("title", _title(encode(cited_title(paper)))),
        ("author", _names(paper.authors, encode)),
        (venue, encode(paper.venue)),
        ("year", str(paper.year) if paper.year else ""),
        ("abstract", encode(paper.abstract)),
        ("keywords", ", ".join(encode(word) for word in paper.keywords)),
        # URLs are verbatim in biblatex: percent-quote the braces, encode nothing else.
        ("url", urllib.parse.quote(paper.url, safe=":/?#[]@!$&'()*+,;=%~-._")),
        # Written back so a reader (ours, biber, Zotero) matches the paper by them.
        ("doi", urllib.parse.quote(paper.doi, safe=":/?#[]@!$&'()*+,;=%~-._<>")),
        ("eprint", paper.arxiv_id),
        ("archiveprefix", "arXiv" if paper.arxiv_id else ""),
    ]
    fields = [model.Field(name, value) for name, value in values if value]
    return model.Entry(kind, citation_key(paper.id), [*fields, *_kept(paper, encode)])


def to_bibtex(items: Iterable[Hit | Paper], *, latex: bool = False) -> str:
    """A .bib file's text: one entry per paper of `items` (hits or papers), in order,
    of the paper's entry type, with every field it keeps. Every field is Unicode (LaTeX's
    special characters escaped); `latex`: spelt in LaTeX escapes wherever one exists
    ({\\'e}), for BibTeX without UTF-8. Either reads back as the same papers."""
    try:
        from bibtexparser.entrypoint import write_string
        from bibtexparser.library import Library
    except ImportError:
        raise DependencyError("BibTeX export needs bibtexparser 2, which is not installed: "
                              "pip install 'bibtexparser>=2.0,<3'") from None
    library = Library()
    encode = _Latex(escapes=latex)
    for paper in papers_of(items):
        library.add(_entry(paper, encode))
    return write_string(library)
