"""A PDF's body as `Block`s: its paragraphs in reading order, each on the page it starts
on and under the heading of its section, with what is not the paper's text left out.

Every page's lines (`layout`, already in column order) are read in turn: running heads,
feet and page numbers go first (`cleaning`), then the front matter up to the end of
the abstract (the title, authors and abstract are the paper's own fields, not body
passages). The rest is read as a flow. A heading (`headings`) starts a section; lines in
the body's size make paragraphs, which run on across a column or a page as long as
the last line did not end a sentence; a caption, a footnote or anything else set in
another size is an *aside*, a block of its own that waits until the paragraph it
interrupts has ended, so that a sentence broken by a figure or a page's footnotes is
read whole. The reference list is left out up to an appendix after it. Each paragraph
becomes blocks of whole sentences, one per page it runs over (a sentence belongs to the
page it starts on), with line-end hyphens mended as the abstract's are (`hyphens`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...papers import Block, split_sentences
from .cleaning import BodyStyle, body_style, letters, without_furniture
from .headings import appendix, caption, contents, heading, named, references, set_apart
from .hyphens import BREAK, Spelling, mend_breaks
from .layout import Document, Line

__all__ = ["FRONT_PAGES", "MAX_BODY_PAGES", "body_blocks", "read_body"]

#: Pages of a body read at most. A paper is rarely over 100 pages and a thesis about 300;
#: past 600 a PDF is a book or a volume of proceedings, whose first 600 pages (about
#: 17 s at the 28 ms a page measured on tests/data/pdfs/real, and more passages than
#: `passages.MAX_PASSAGES` keeps) stand for it rather than letting one file hold the
#: build for minutes.
MAX_BODY_PAGES = 600
#: Pages the front matter (title, authors, abstract, keywords) is looked for on: the
#: pages the abstract is read from (`extraction.PAGES_READ`).
FRONT_PAGES = 3
#: Two lines are in one size when their sizes differ by at most this share of the
#: larger, or by `_SAME_SIZE_POINTS`: a line in a size further from the body's is not
#: body text (a footnote, a caption, a figure's labels, small print). pinp's bold run-in
#: paragraph heads read 7.9 pt in its 8.6 pt text (0.92); footnotes are set at 0.8 of
#: the body or less (JSS 9 over 10.9 pt, pinp 5.3 over 8.6).
_SAME_SIZE_SHARE = 0.1
_SAME_SIZE_POINTS = 0.6
#: Small print is set with more leading for its size than the body (pinp's 5.3 pt
#: footnotes 8 pt apart, 1.5 sizes, where its 8.6 pt text is 10.9 pt apart, 1.27): a
#: line of it follows the one above if it is at most this many sizes below.
_SMALL_PRINT_LEAD = 1.55
#: A paragraph's lines are this much further apart than the body's usual distance
#: (a share of the font size) where one paragraph ends and the next begins (JSS sets
#: paragraphs 3.5 pt further apart at 10.9 pt: 0.32 of the size).
_PARAGRAPH_GAP = 0.2
#: Words a block must have to be text, and the share of them that must be words of
#: letters (a figure's axis labels, a table's numbers are neither).
_MIN_WORDS = 5
_CAPTION_MIN_WORDS = 2
_LETTERED_SHARE = 0.5
#: Letters of the abstract's end looked for among the first pages' lines.
_ABSTRACT_TAIL = 40
_SENTENCE_ENDS = re.compile(r"[.!?:][\"'”’)\]]*$")
_LETTERED = re.compile(r"[^\W\d_]{2,}")
# The keywords after an abstract, or PNAS's between bars ("R | C++ | Rcpp").
_KEYWORDS = re.compile(r"^\W*(?:key\s?words?|index terms|subjects?|ccs concepts|msc|jel|pacs)"
                       r"\b|^[^|]{1,40}(?:\s\|\s[^|]{1,40}){2,}$", re.IGNORECASE)
_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}\s*[\divxlc]+$")
# Headings of the front matter, which the body does not start under.
_FRONT_HEADINGS = re.compile(r"^\W*(?:abstract|summary|contents|keywords?)\W*$", re.IGNORECASE)
# A footnote's number glued to its first word ("4macOS users ...", "2Within base R").
_NOTE_NUMBER = re.compile(r"^\d{1,2}(?=[^\W\d_][a-z])")
# Where a paragraph moves to the next page, until its sentences are placed on pages.
_PAGE_MARK = "\x1e"


@dataclass
class _Group:
    """Lines read as one paragraph, under `section`; `aside`: a caption, a footnote or
    other text set apart, a block of its own."""

    lines: list[Line]
    section: str
    aside: bool = False
    caption: bool = False


def read_body(document: Document, *, title: str = "", abstract: str = "",
              headed: bool = True, max_pages: int = MAX_BODY_PAGES
              ) -> tuple[list[Block], int]:
    """The body of `document` as blocks, and how many pages were read (at most
    `max_pages`); `title` and `abstract` as the first pages gave them, `headed` when
    the abstract had its own heading. A page that does not load raises PDFium's error."""
    count = min(document.pages, max_pages)
    pages = [document.lines(index)[0] for index in range(count)]
    heights = [document.height(index) for index in range(count)]
    labels = [document.label(index) for index in range(count)]
    return body_blocks(pages, heights, labels, title=title, abstract=abstract,
                       headed=headed), count


def body_blocks(pages: Sequence[Sequence[Line]], heights: Sequence[float],
                labels: Sequence[str], *, title: str = "", abstract: str = "",
                headed: bool = True) -> list[Block]:
    """The blocks of a body given as its pages' lines, heights and page labels."""
    style = body_style(pages)
    cleaned = without_furniture(pages, heights, title)
    lines = [line for page in cleaned for line in page]
    front = sum(len(page) for page in cleaned[:FRONT_PAGES])
    start, section = _front(lines, front, style, title, abstract, headed)
    groups = _Flow(style, section).read(lines[start:])
    spelling = Spelling.of(_joined(group.lines) for group in groups)
    own = letters(abstract)
    return [block for group in groups for block in _blocks(group, spelling, labels, own)]


# -- the front matter -------------------------------------------------------------------
def _front(lines: Sequence[Line], front: int, style: BodyStyle, title: str, abstract: str,
           headed: bool) -> tuple[int, str]:
    """Where the body starts among `lines` (the first `front` are on the first pages),
    and the section it starts in. After an abstract under its own heading, the body
    starts at the next heading (the keywords, dates and contents between are front
    matter), if one comes on the same page or the next; otherwise right after the
    abstract. An abstract found with no heading is the text's first paragraph: the body
    goes on after it, under the heading before it, if any. Without an abstract, the
    body starts at the first heading after the title."""
    after = _after_abstract(lines[:front], abstract)
    if after is None:
        after, headed = _after_title(lines, title), True
    if not headed:
        before = [found[0] for index in range(after)
                  if (found := _heading_at(lines, index, style)) is not None
                  and named(found[0]) and not _FRONT_HEADINGS.match(found[0])]
        return after, before[-1] if before else ""
    last_page = lines[after - 1].page if after else 0
    for index in range(after, front):
        if lines[index].page > last_page + 1:
            break
        if _heading_at(lines, index, style) is not None:
            return index, ""
    return after, ""


def _after_abstract(lines: Sequence[Line], abstract: str) -> int | None:
    """The index in `lines` after the line the abstract ends on, if it is found."""
    tail = letters(abstract)[-_ABSTRACT_TAIL:]
    if not tail:
        return None
    stream, ends = "", []
    for line in lines:
        stream += letters(line.text)
        ends.append(len(stream))
    found = stream.find(tail)
    if found < 0:
        return None
    end = found + len(tail)
    return next(number for number, upto in enumerate(ends) if upto >= end) + 1


def _after_title(lines: Sequence[Line], title: str) -> int:
    """How many of the first lines print the title."""
    own = letters(title)
    count = 0
    for line in lines if own else ():
        text = letters(line.text)
        if not text or text not in own:
            break
        count += 1
    return count


# -- the flow ---------------------------------------------------------------------------
class _Flow:
    """The body's lines read in order into paragraphs, asides and sections."""

    def __init__(self, style: BodyStyle, section: str = "") -> None:
        self.style = style
        self.groups: list[_Group] = []
        self.text: _Group | None = None  # the paragraph being read
        self.aside: _Group | None = None  # the caption or small print being read
        self.waiting: list[_Group] = []  # asides read while the paragraph goes on
        self.section = section
        # Left out: the reference list (up to an appendix), a table of contents (up to
        # the next heading).
        self.skipping: str = ""

    def read(self, lines: Sequence[Line]) -> list[_Group]:
        index = 0
        while index < len(lines):
            found = _heading_at(lines, index, self.style)
            if found is not None and (self.skipping != "contents"
                                      or set_apart(lines[index], self.style)):
                name, index = found
                self._heading(name)
                continue
            if not self.skipping:
                self._line(lines[index], lines[index + 1] if index + 1 < len(lines) else None)
            index += 1
        self._close_text()
        return self.groups

    def _heading(self, name: str) -> None:
        self._close_text()
        if references(name):
            self.skipping = "references"
        elif contents(name):
            self.skipping = "contents"
        elif self.skipping != "references" or appendix(name):
            self.skipping = ""
            self.section = name

    def _line(self, line: Line, following: Line | None) -> None:
        if _DOT_LEADERS.search(line.plain) or (line.page < FRONT_PAGES
                                                and _KEYWORDS.match(line.plain)):
            return  # a table of contents' entry (or a list of figures'), the keywords
        label = caption(line, self.style)
        if label is not None and not (self.text is not None and _mid_sentence(
                self.text.lines[-1], line, self.style)):  # "... shown in / Figure 1."
            self._close_aside()
            self.aside = _Group([line], label, aside=True, caption=True)
            return
        if self.aside is not None and _next_line(self.aside.lines[-1], line, self.style):
            self.aside.lines.append(line)
            return
        self._close_aside()
        if not _same_size(line.size, self.style.size):
            self.aside = _Group([line], self.section, aside=True)
        elif self.text is not None and _goes_on(self.text.lines, line, following,
                                                self.style):
            self.text.lines.append(line)
        else:
            self._close_text()
            self.text = _Group([line], self.section)

    def _close_aside(self) -> None:
        if self.aside is not None:
            (self.waiting if self.text is not None else self.groups).append(self.aside)
            self.aside = None

    def _close_text(self) -> None:
        """The paragraph ends: it, then the asides read inside it."""
        self._close_aside()
        if self.text is not None:
            self.groups.append(self.text)
            self.text = None
        self.groups += self.waiting
        self.waiting = []


def _heading_at(lines: Sequence[Line], index: int, style: BodyStyle, depth: int = 0
                ) -> tuple[str, int] | None:
    """The heading that starts at `lines[index]` (it may run over two or three lines)
    and the index after it, or None. A heading known only by being set apart (no number,
    no usual name) must be followed by body text, perhaps after another heading: a
    figure's labels are set apart too, but followed by more of them."""
    name = heading(lines[index], style)
    if name is None or not (set_apart(lines[index], style) or _spaced(lines, index, style)):
        return None
    end = index + 1
    while end < len(lines) and _heading_goes_on(lines[end - 1], lines[end], style, name):
        name += " " + " ".join(lines[end].plain.split())
        end += 1
    if end == len(lines) or named(name) or _same_size(lines[end].size, style.size) or (
            depth < 2 and _heading_at(lines, end, style, depth + 1) is not None):
        return name, end
    return None


def _heading_goes_on(last: Line, line: Line, style: BodyStyle, name: str) -> bool:
    """Whether `line` is the second line of the heading `last` started: set as it is,
    right below it, and no heading or caption of its own."""
    return (line.page == last.page and abs(line.size - last.size) <= 0.3
            and line.bold == last.bold and set_apart(line, style)
            and _next_line(last, line, style) and len((name + line.plain).split()) <= 16
            and not named(heading(line, style) or "") and caption(line, style) is None)


def _spaced(lines: Sequence[Line], index: int, style: BodyStyle) -> bool:
    """Whether `lines[index]` is set off from the lines before and after it by more
    than their usual distance: a heading in the text's own type is (a line of a table
    of contents is not)."""
    before = index == 0 or not _next_line(lines[index - 1], lines[index], style)
    after = index + 1 == len(lines) or not _next_line(lines[index], lines[index + 1], style)
    return before or after


def _same_size(one: float, other: float) -> bool:
    return abs(one - other) <= max(_SAME_SIZE_POINTS, _SAME_SIZE_SHARE * max(one, other))


def _expected_lead(line: Line, style: BodyStyle) -> float:
    """How far below the last line the next one of `line`'s size is expected."""
    lead = style.lead * line.size / style.size if style.size else 1.2 * line.size
    return lead if _same_size(line.size, style.size) else max(lead, _SMALL_PRINT_LEAD
                                                                  * line.size)


def _next_line(last: Line, line: Line, style: BodyStyle) -> bool:
    """Whether `line` is the line right below `last` in its column, in its size."""
    if line.page != last.page or not _same_size(line.size, last.size):
        return False
    lead = last.bottom - line.bottom
    return (0.3 * line.size < lead <= _expected_lead(line, style) + _PARAGRAPH_GAP * line.size
            and line.x0 < last.x1 and line.x1 > last.x0)


def _mid_sentence(last: Line, line: Line, style: BodyStyle) -> bool:
    """Whether `line` goes on with the sentence `last` left unfinished, right below it."""
    return _SENTENCE_ENDS.search(last.plain) is None and _next_line(last, line, style)


def _indented(line: Line, following: Line | None, style: BodyStyle) -> bool:
    """Whether `line` starts further in than the line after it: a paragraph's first."""
    return following is not None and _next_line(line, following, style) and \
        0.6 * line.size < line.x0 - following.x0 < 4 * line.size


def _goes_on(lines: Sequence[Line], line: Line, following: Line | None,
             style: BodyStyle) -> bool:
    """Whether `line` continues the paragraph of `lines`. Right below its last line it
    does, unless it is indented after a sentence's end; after a gap, at the top of the
    next column or page, it does if the paragraph's last line did not end a sentence
    (a figure, a footnote or the page's end came between)."""
    last = lines[-1]
    ended = _SENTENCE_ENDS.search(last.plain) is not None
    if _next_line(last, line, style):
        return not (ended and _indented(line, following, style))
    return not ended and not _indented(line, following, style)


# -- blocks -----------------------------------------------------------------------------
def _joined(lines: Sequence[Line], pages: bool = False, notes: bool = False) -> str:
    """Lines as running text (`fields.join_lines` of their `plain` text: without
    footnote marks), line-end breaks marked; with `pages`, a mark where the next page
    starts (after the rest of a word broken across the page break); with `notes`, the
    number a footnote starts with left out, where it is set at the text's size."""
    parts: list[str] = []
    for last, line in zip([None, *lines], lines):
        text = " ".join(line.plain.split())
        if notes:
            text = _NOTE_NUMBER.sub("", text)
        if pages and last is not None and line.page != last.page:
            head, space, rest = text.partition(" ")
            text = head + space + _PAGE_MARK + rest if last.hyphenated \
                else _PAGE_MARK + text
        parts.append(text + BREAK if line.hyphenated else text + " ")
    return " ".join("".join(parts).split())


def _blocks(group: _Group, spelling: Spelling, labels: Sequence[str], abstract: str
            ) -> list[Block]:
    """`group` as blocks of whole sentences, one for each page a sentence starts on;
    none when it is not text (too few words of letters) or repeats the abstract."""
    text = mend_breaks(_joined(group.lines, pages=True,
                               notes=group.aside and not group.caption), spelling)
    plain = text.replace(_PAGE_MARK, "")
    if not _readable(plain, group):
        return []
    if len(letters(plain)) >= 80 and letters(plain) in abstract:
        return []
    starts, cursor = [], 0  # where each page's text starts in `plain`
    for piece in text.split(_PAGE_MARK):
        starts.append(cursor)
        cursor += len(piece)
    pages = sorted({line.page for line in group.lines})
    blocks: list[Block] = []
    cursor = 0
    for sentence in split_sentences(plain):
        found = plain.find(sentence, cursor)
        cursor = found + len(sentence) if found >= 0 else cursor
        page = pages[min(sum(start <= max(found, 0) for start in starts), len(pages)) - 1]
        if blocks and blocks[-1].page == page + 1:
            last = blocks[-1]
            blocks[-1] = Block(f"{last.text} {sentence}", last.page, last.page_label,
                               last.section)
        else:
            blocks.append(Block(sentence, page + 1, labels[page] if page < len(labels)
                                else "", group.section))
    return blocks


def _readable(text: str, group: _Group) -> bool:
    """Whether `text` reads as text: words enough, most of them of letters."""
    words = text.split()
    least = _CAPTION_MIN_WORDS if group.caption else _MIN_WORDS
    lettered = sum(bool(_LETTERED.search(word)) for word in words)
    return len(words) >= least and lettered >= _LETTERED_SHARE * len(words)
