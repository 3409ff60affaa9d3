"""A body's lines read in order as a flow of paragraphs, asides and sections.

Lines in the body's size make paragraphs, which run on across a column or a page as
long as the last line did not end a sentence; a caption, a footnote or anything else
set in another size is an *aside*, a group of its own that waits until the paragraph it
interrupts has ended, so that a sentence broken by a figure or a page's footnotes is
read whole. A heading (`headings`) starts a section; the reference list is left out up
to an appendix or a numbered section after it, a table of contents or the authors'
addresses up to the next heading.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .cleaning import BodyStyle
from .headings import caption, heading, named, not_text, references, resumes, set_apart
from .layout import Line

__all__ = ["Flow", "Group", "heading_at"]

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
_SENTENCE_ENDS = re.compile(r"[.!?:][\"'”’)\]]*$")
_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}\s*[\divxlc]+$")


@dataclass
class Group:
    """Lines read as one paragraph, under `section`; `aside`: a caption (`caption`),
    a footnote or other text set apart, a block of its own."""

    lines: list[Line]
    section: str
    aside: bool = False
    caption: bool = False


class Flow:
    """The body's lines read in order into paragraphs, asides and sections
    (`read`)."""

    def __init__(self, style: BodyStyle, section: str = "") -> None:
        self.style = style
        self.groups: list[Group] = []
        self.text: Group | None = None  # the paragraph being read
        self.aside: Group | None = None  # the caption or small print being read
        self.waiting: list[Group] = []  # asides read while the paragraph goes on
        self.section = section
        # Left out: the reference list (up to an appendix or a numbered section), a
        # table of contents or the authors' addresses (up to the next heading).
        self.skipping: str = ""

    def read(self, lines: Sequence[Line]) -> list[Group]:
        index = 0
        while index < len(lines):
            found = heading_at(lines, index, self.style)
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
        elif not_text(name):
            self.skipping = "contents"
        elif self.skipping != "references" or resumes(name):
            self.skipping = ""
            self.section = name

    def _line(self, line: Line, following: Line | None) -> None:
        if _DOT_LEADERS.search(line.plain):
            return  # an entry of a table of contents, or of a list of figures
        label = caption(line, self.style)
        if label is not None and not (self.text is not None and _mid_sentence(
                self.text.lines[-1], line, self.style)):  # "... shown in / Figure 1."
            self._close_aside()
            self.aside = Group([line], label, aside=True, caption=True)
            return
        if self.aside is not None and _next_line(self.aside.lines[-1], line, self.style):
            self.aside.lines.append(line)
            return
        self._close_aside()
        if not _same_size(line.size, self.style.size):
            self.aside = Group([line], self.section, aside=True)
        elif self.text is not None and _goes_on(self.text.lines, line, following,
                                                self.style):
            self.text.lines.append(line)
        else:
            self._close_text()
            self.text = Group([line], self.section)

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


def heading_at(lines: Sequence[Line], index: int, style: BodyStyle, depth: int = 0
                ) -> tuple[str, int] | None:
    """The heading that starts at `lines[index]` (it may run over two or three lines)
    and the index after it, or None. One in the text's own type must be set off from
    the lines around it (a table of contents' lines are not); one known only by being
    set apart (no number, no usual name) must be followed by body text, perhaps after
    another heading: a figure's labels are set apart too, but followed by more of them."""
    name = heading(lines[index], style)
    if name is None or not (set_apart(lines[index], style) or _spaced(lines, index, style)):
        return None
    end = index + 1
    while end < len(lines) and _heading_goes_on(lines[end - 1], lines[end], style, name):
        # "3 Changes from older Ver-" + "sions": a heading's words break as the text's.
        name += ("" if lines[end - 1].hyphenated else " ") + " ".join(lines[end].plain.split())
        end += 1
    if lines[end - 1].hyphenated:
        return None  # a word broken at its end: a line of text, set apart or not
    if end == len(lines) or named(name) or _same_size(lines[end].size, style.size) or (
            depth < 2 and heading_at(lines, end, style, depth + 1) is not None):
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


def _same_row(last: Line, line: Line) -> bool:
    """Whether `line` goes on along the baseline of `last`, right after it."""
    return line.page == last.page and abs(line.bottom - last.bottom) < 0.3 * line.size \
        and 0 <= line.x0 - last.x1 < 2 * line.size


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
    (a figure, a footnote or the page's end came between) and `line` does not start
    one: a paragraph that ends without a full stop (a code listing, an equation) is
    followed by one that starts with a capital, and read on into it, its first sentence
    would be placed on the page before (a sentence broken before a capital, "the R" /
    "Core Team", is read as two, which the passages join again)."""
    last = lines[-1]
    if _same_row(last, line):
        return True  # PDFium broke the line at a raised footnote mark
    ended = _SENTENCE_ENDS.search(last.plain) is not None
    if _next_line(last, line, style):
        return not (ended and _indented(line, following, style))
    capital = line.plain[:1].isupper() and not last.hyphenated
    return not ended and not capital and not _indented(line, following, style)
