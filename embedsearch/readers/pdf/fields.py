"""A paper's title and abstract found among the lines of its first pages.

Typesetting leaves the same marks whatever the template: the title is the largest text
near the top of page 1 (when the file's metadata does not name it), the authors follow
it, and the abstract is the block after an "Abstract" heading, or run in after
"Abstract." / "Abstract—" (LNCS, IEEE), ending at the first section heading, the
keywords or the index terms. A paper with no such heading (a JOSS paper has a
"Summary"; pinp and JPSJ set the abstract apart without one; a short report starts with
its introduction) gets the block after a Summary heading, else the paragraph of prose
before its first section, else its first long paragraph. A title set no larger than
the body is the first line set apart (in capitals, or a little larger) before the
abstract. Every field says where it came from, so that a user can judge it (`--report`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .hyphens import BREAK
from .layout import Line

__all__ = ["BARRED_KEYWORDS", "TRAILING_MARKS", "Found", "abstract_of", "front_matter_ends",
           "join_lines", "title_of", "words_of"]

_TITLE_MIN_GROWTH = 1.15  # a title is set at least this much larger than the body
_TITLE_MAX_LINES = 5
# Without a clearly larger line, a title may be set only a little larger than the body
# (JPSJ: 12 pt over 10.9), or in capitals at the body's size (R News).
_TITLE_MIN_LEAD = 1.05
_TITLE_CAPITALS = 0.8
_TITLE_SEARCH_LINES = 15
_TITLE_MAX_CHARS = 300
_ABSTRACT_MIN_WORDS = 15
_ABSTRACT_MAX_CHARS = 6000
_PARAGRAPH_MIN_WORDS = 40
_PROSE_MIN_WORDS = 15
_PROSE_LOWER_SHARE = 0.5
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")

_ABSTRACT = re.compile(r"^\W*a\s?b\s?s\s?t\s?r\s?a\s?c\s?t\W*$", re.IGNORECASE)
_SUMMARY = re.compile(r"^\W*(?:summary|résumé)\W*$", re.IGNORECASE)
# "Abstract. We ...", "Abstract—We ...", "ABSTRACT: We ...", "Abstract We ..." (bold).
_RUN_IN = re.compile(r"^\W*(?:[Aa]bstract|ABSTRACT)\s*(?:[.:—–-]+\s*|\s+(?=[A-Z]))(?P<rest>\S.*)$")
# What ends an abstract: a numbered section ("1 Introduction", "2. Methods", "I.
# INTRODUCTION", "1.1 Scope"; short, and without commas, brackets or more numbers, so
# that an affiliation "1 Halton School Board 2 Anvil" or a line of text is not one), an
# unnumbered Introduction, or what follows an abstract in the common templates
# (keywords, index terms, dates, a copyright line).
_NUMBERED = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,5}\.|[A-H]\.)\s+[A-Z][^.,()\d]*$")
_SECTION_WORDS = 10
_FOLLOWERS = re.compile(
    r"^(?:(?:introduction|background|motivation|overview)\W*$"
    r"|(?:key\s?words?|index terms|ccs concepts|acm reference format|additional key words"
    r"|general terms|categories and subject descriptors)\b"
    r"|(?:subjects?|msc|jel|pacs|highlights|received|accepted|published|citation)\s*[:—]"
    r"|copyright\s*(?:©|\(c\)|\d)|©)", re.IGNORECASE)
# PNAS-style keywords after an abstract with no heading ("R | C++ | Rcpp"); not one of
# the _FOLLOWERS, as authors too may be listed between bars.
BARRED_KEYWORDS = re.compile(r"^[^|]{1,40}(?:\s\|\s[^|]{1,40}){2,}$")
_OPENING_SECTION = re.compile(r"^(?:introduction|background|motivation|overview)\W*$",
                              re.IGNORECASE)
#: Footnote marks after a title or a name.
TRAILING_MARKS = re.compile(r"[\s*∗†‡§¶⋆]+$")
_FILE_NAME = re.compile(r"\.(?:pdf|docx?|rtf|odt|tex|dvi|ps|indd|pages|qxd)$", re.IGNORECASE)
_NOT_TITLES = re.compile(
    r"^(?:microsoft (?:word|powerpoint) - |untitled|title|paper title|template|manuscript"
    r"|main|paper|article|document|draft|slides|thesis|arxiv:|doi:|\\|\$|http)",
    re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{3,}")

@dataclass(frozen=True)
class Found:
    """One field and where it came from ("metadata", "large-font lines on page 1", ...)."""

    text: str
    source: str


def join_lines(lines: Sequence[Line]) -> str:
    """Lines as running text; a word hyphenated across a line end is joined with a
    `hyphens.BREAK` mark, which `hyphens.mend_breaks` turns into a hyphen or nothing."""
    parts: list[str] = []
    for line in lines:
        parts.append(line.text + BREAK if line.hyphenated else line.text + " ")
    return " ".join("".join(parts).split())


def words_of(text: str) -> set[str]:
    """The words of three letters or more in `text`, casefolded."""
    return {word.casefold() for word in _WORD.findall(text)}


def _body_size(lines: Sequence[Line]) -> float:
    """The font size most of the page's characters are set in."""
    counts: Counter[float] = Counter()
    for line in lines:
        counts[round(line.size)] += len(line.text)
    return float(counts.most_common(1)[0][0]) if counts else 0.0


# -- title ------------------------------------------------------------------------------
def _metadata_title(title: str, page_text: set[str]) -> bool:
    """A real title: not empty, not a file or template name, of a title's length, and
    its words printed on page 1 (so not another document's title left in the file)."""
    title = title.strip()
    words = words_of(title)
    if not 8 <= len(title) <= _TITLE_MAX_CHARS or len(title.split()) < 2 or not words:
        return False
    if _FILE_NAME.search(title) or _NOT_TITLES.match(title):
        return False
    return len(words & page_text) >= 0.7 * len(words)


def _title_lines(lines: Sequence[Line]) -> list[Line]:
    """The first run of page 1's largest lines, when they are larger than its body."""
    body = _body_size(lines)
    # A section heading ("1 Introduction") is never the title, however large.
    sized = [line for line in lines if len(_WORD.findall(line.text)) >= 1
             and not _section(line)]
    if not sized:
        return []
    largest = max(line.size for line in sized)
    if largest < body * _TITLE_MIN_GROWTH:
        return []
    run: list[Line] = []
    for line in lines:
        if abs(line.size - largest) <= 0.5 and line.text.strip() and not _section(line):
            if run and run[-1].bottom - line.top > 2.5 * largest:
                break
            run.append(line)
            if len(run) == _TITLE_MAX_LINES:
                break
        elif run:
            break
    return run


def _capitals(line: Line) -> bool:
    """Whether `line` is set in capitals: a title in small caps or upper case."""
    letters = [char for char in line.plain if char.isalpha()]
    return len(letters) >= 10 and sum(char.isupper() for char in letters) >= \
        _TITLE_CAPITALS * len(letters)


def _set_apart_lines(lines: Sequence[Line]) -> list[Line]:
    """With no line clearly larger than the body, the first line of the front matter
    (before the abstract or the first section) that is still set apart: a little
    larger than the body, or in capitals at the body's size or more (R News, AMS-style
    titles), with the lines after it in the same size."""
    body = _body_size(lines)
    run: list[Line] = []
    for line in lines[:_TITLE_SEARCH_LINES]:
        if front_matter_ends(line):
            break
        if run:
            if abs(line.size - run[0].size) > 0.5 or run[-1].bottom - line.top > 2.5 * line.size:
                break
            run.append(line)
            if len(run) == _TITLE_MAX_LINES:
                break
        elif len(_WORD.findall(line.text)) >= 2 and (
                line.size >= body * _TITLE_MIN_LEAD
                or (line.size >= body - 0.6 and _capitals(line))):
            run.append(line)
    return run


def title_of(lines: Sequence[Line], metadata: str) -> tuple[Found | None, int]:
    """The title, and the index in `lines` (page 1) where the text after it starts."""
    run, source = _title_lines(lines), "large-font lines on page 1"
    if not run:
        run, source = _set_apart_lines(lines), "first set-apart lines on page 1"
    after = lines.index(run[-1]) + 1 if run else 0
    page_words = words_of(" ".join(line.text for line in lines))
    if _metadata_title(metadata, page_words):
        return Found(" ".join(metadata.split()), "metadata"), after
    text = TRAILING_MARKS.sub("", join_lines(run))
    if run and 3 <= len(text) <= _TITLE_MAX_CHARS:
        return Found(text, source), after
    return None, after


# -- abstract ---------------------------------------------------------------------------
def _section(line: Line) -> bool:
    """Whether `line` is a section heading or what follows an abstract (keywords...)."""
    return bool(_FOLLOWERS.match(line.plain) or (_NUMBERED.match(line.plain)
                                                 and line.words <= _SECTION_WORDS))


def _heading_like(line: Line, body: Line) -> bool:
    """A short line set apart from the abstract's text: larger, or bold where it is not."""
    text = line.plain
    if line.words > 10 or not text or text[-1] in ".,;:" or not (text[0].isupper()
                                                                   or text[0].isdigit()):
        return False
    return line.size >= body.size + 1 or (line.bold and not body.bold)


def _block_after(lines: Sequence[Line], start: int, first: Line | None = None,
                 first_text: str = "") -> str:
    """The text from `start` to the next section heading, keywords or page end, after
    `first_text` (the rest of the line `first` that ran in after "Abstract.")."""
    taken: list[Line] = []
    reference: Line | None = None
    for line in lines[start:]:
        if reference is not None and line.page != reference.page:
            break
        if _section(line) or _ABSTRACT.match(line.plain):
            break
        if reference is None:
            reference = line
        elif line.size < 0.85 * reference.size or line.size > 1.3 * reference.size:
            continue  # a footnote, a running header or a figure's text drawn in between
        elif _heading_like(line, reference):
            break
        elif taken and taken[-1].bottom - line.top > 2.5 * reference.size and \
                line.x0 < taken[-1].x1 and line.x1 > taken[-1].x0:
            break  # a wide gap in the same column: the block has ended
        taken.append(line)
        if sum(len(line.text) for line in taken) > _ABSTRACT_MAX_CHARS:
            break
    text = join_lines(taken)
    if first is None:
        return text
    return (first_text + (BREAK if first.hyphenated else " ") + text).strip()


def _paragraphs(lines: Sequence[Line]) -> list[list[Line]]:
    """Lines grouped into paragraphs: a new one at a change of size, a wide gap, or an
    indented line after a short one."""
    groups: list[list[Line]] = []
    for line in lines:
        current = groups[-1] if groups else None
        if current is not None:
            last = current[-1]
            same_size = abs(line.size - last.size) <= 0.6
            gap = last.bottom - line.top
            indented = (line.x0 > min(item.x0 for item in current) + line.size and
                        last.x1 < max(item.x1 for item in current) - 2 * line.size)
            if same_size and line.page == last.page and gap < 0.9 * line.size \
                    and not indented:
                current.append(line)
                continue
        groups.append([line])
    return groups


def abstract_of(pages: Sequence[Sequence[Line]], after_title: int, fallback: bool = True
                ) -> Found | None:
    """The abstract of the first pages' lines (`pages[0]` is page 1), and its source:
    after an Abstract heading, else a Summary heading, else (if `fallback`) the first
    long paragraph after the title."""
    lines = [line for page in pages for line in page]
    found = _after_heading(lines, _ABSTRACT, "Abstract")
    if found is None:
        found = _after_heading(lines, _SUMMARY, "Summary")
    if found is not None or not fallback:
        return found
    if pages:
        found = _front_paragraph(pages[0], after_title)
    return found or _first_paragraph(pages, after_title)


def _after_heading(lines: Sequence[Line], heading: re.Pattern[str], name: str
                   ) -> Found | None:
    """The block after a heading line, or run in after "Abstract." on its line; only
    before the first section heading, so a later mention is never taken."""
    for index, line in enumerate(lines):
        if heading.match(line.plain):
            text = _block_after(lines, index + 1)
            source = f"block after the {name} heading"
        elif name == "Abstract" and (run_in := _RUN_IN.match(line.text)):
            text = _block_after(lines, index + 1, line, run_in["rest"])
            source = "text run in after “Abstract” on its line"
        elif _section(line) and (not _FOLLOWERS.match(line.plain)
                                 or _OPENING_SECTION.match(line.plain)):
            return None  # a numbered section or the Introduction: the text has begun
        else:
            continue
        if len(text.split()) >= _ABSTRACT_MIN_WORDS:
            return Found(text, source + (f" (page {line.page + 1})" if line.page else ""))
    return None


def _prose(paragraph: Sequence[Line]) -> bool:
    """Whether `paragraph` reads as sentences: of some length, on two baselines or
    more, ending a sentence, and mostly in lower-case words (an affiliation, an author
    list or a line of keywords is mostly capitalised, or ends without a full stop)."""
    text = join_lines(paragraph)
    words = text.split()
    baselines = {round(line.bottom) for line in paragraph}
    if len(words) < _ABSTRACT_MIN_WORDS or len(baselines) < 2:
        return False
    if not _SENTENCE_END.search(text):
        return False
    lettered = [word for word in words if word[0].isalpha()]  # not "(FAQ)", "2011;"
    return sum(word[0].islower() for word in lettered) >= _PROSE_LOWER_SHARE * len(lettered)


def _heads_text(line: Line, following: Line, body: float) -> bool:
    """Whether `line` is an unnumbered section heading: short, unpunctuated, at the
    body's size or more, and set apart (larger or bolder) from body-size text below."""
    text = line.plain
    if line.words > _SECTION_WORDS or not text or text[-1] in ".,;:" or \
            not text[0].isupper() or line.size < body - 0.6:
        return False
    if abs(following.size - body) > 0.6 or following.page != line.page:
        return False
    return line.size >= following.size + 0.8 or (line.bold and not following.bold)


def _front_paragraph(lines: Sequence[Line], after_title: int) -> Found | None:
    """An abstract with no heading: the first paragraph of prose between the title and
    the first section heading of page 1, at whatever size (pinp sets it smaller than
    the body, JPSJ indents it above "KEYWORDS:"), with the paragraphs after it in its
    size and weight. Only when a section heading follows: without one, nothing tells
    the front matter from the text."""
    front: list[Line] = []
    body = _body_size(lines)
    rest = lines[after_title:]
    for line, following in zip(rest, rest[1:]):
        if _section(line) or BARRED_KEYWORDS.match(line.plain) or \
                _heads_text(line, following, body):
            break
        front.append(line)
    else:
        return None
    taken: list[Line] = []
    for paragraph in _paragraphs(front):
        if not taken:
            if _prose(paragraph):
                taken = list(paragraph)
        elif abs(paragraph[0].size - taken[0].size) <= 0.3 and \
                paragraph[0].bold == taken[0].bold and _prose(paragraph):
            taken += paragraph
        else:
            break
    if not taken:
        return None
    return Found(join_lines(taken)[:_ABSTRACT_MAX_CHARS],
                 "paragraph before the first section (no Abstract heading)")


def _first_paragraph(pages: Sequence[Sequence[Line]], after_title: int) -> Found | None:
    """The first paragraph of prose in the body's size after the title, with the ones
    after it while they are short (an introduction that opens with one line), up to
    the next heading."""
    body = _body_size(pages[0]) if pages else 0.0
    for page, lines in enumerate(pages):
        taken: list[Line] = []
        for paragraph in _paragraphs(lines[after_title:] if page == 0 else lines):
            prose = len(join_lines(paragraph).split()) >= _PROSE_MIN_WORDS
            if not taken:
                if prose and abs(paragraph[0].size - body) <= 0.6:
                    taken = list(paragraph)
            elif _section(paragraph[0]) or _heading_like(paragraph[0], taken[0]) or \
                    abs(paragraph[0].size - taken[0].size) > 0.6:
                break
            else:
                taken += paragraph
            if len(join_lines(taken).split()) >= _PARAGRAPH_MIN_WORDS:
                break
        if taken:
            return Found(join_lines(taken)[:_ABSTRACT_MAX_CHARS],
                         f"first paragraph on page {page + 1} (no Abstract heading)")
    return None


def front_matter_ends(line: Line) -> bool:
    """Whether `line` starts the paper's text: the abstract, or a section."""
    return bool(_ABSTRACT.match(line.plain) or _SUMMARY.match(line.plain)
                or _RUN_IN.match(line.text) or _section(line))
