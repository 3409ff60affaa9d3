"""What a PDF's pages print besides its text: running heads and feet, page numbers; and
the style of the body text, which the rest is told apart from.

A running head is the line a typesetter repeats at the top (or foot) of many pages:
the journal's name, the short title, the authors, often with the page number beside
it. Here it is a line near the top or bottom edge whose text, digits aside, comes back
at about the same height on another page, or that repeats the paper's title; a page
number is a line there that holds only a number ("7", "vii", "Page 3 of 12", "– 7 –").
None of them is part of the text a reader reads, and left in they would cut sentences
that run from one page to the next.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .layout import Line

__all__ = ["EDGE_SHARE", "BodyStyle", "body_style", "letters", "without_furniture"]

#: The band at the top and at the bottom of a page (a share of its height) where running
#: heads, feet and page numbers are looked for. The real PDFs of tests/data/pdfs/real put
#: them within 9% of the edge (JSS's head at 90-91% of the height, pinp's foot at 5%);
#: their text starts at 13% at the closest, and a text line found in the band is taken
#: only if it repeats, which body text does not.
EDGE_SHARE = 0.12
#: Points two running heads' baselines may differ by and still be one head (a page
#: number's width or a descender moves a box by a point or two).
_SAME_HEIGHT = 4.0
#: Rows of text at the top and at the bottom of a page where a repeated line is a
#: running head or foot wherever the page puts them (a head and a page number beside
#: or below it).
_OUTER_ROWS = 2
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?$"
    r"|^[-–—]\s*\d{1,4}\s*[-–—]$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_NOT_LETTERS = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class BodyStyle:
    """How the body text of a document is set: the font size most of its characters
    have, whether that text is bold (some fonts report every glyph bold, and then
    boldness sets nothing apart), and the usual distance between the baselines of two
    of its lines (`lead`, points)."""

    size: float
    bold: bool
    lead: float


def letters(text: str) -> str:
    """`text` casefolded, with everything but letters and digits left out: how two
    texts are compared whatever their spaces, hyphens and line breaks."""
    return _NOT_LETTERS.sub("", text.casefold())


def body_style(pages: Sequence[Sequence[Line]]) -> BodyStyle:
    """The style of the text most characters of `pages` are set in."""
    sizes: Counter[float] = Counter()
    for line in (line for page in pages for line in page):
        sizes[round(line.size * 2) / 2] += len(line.text)
    if not sizes:
        return BodyStyle(10.0, False, 12.0)
    size = sizes.most_common(1)[0][0]
    body = [line for page in pages for line in page if round(line.size * 2) / 2 == size]
    bold = sum(len(line.text) for line in body if line.bold) * 2 > sum(
        len(line.text) for line in body)
    leads = [last.bottom - line.bottom for page in pages for last, line in zip(page, page[1:])
             if round(last.size * 2) / 2 == size == round(line.size * 2) / 2
             and 0.8 * size < last.bottom - line.bottom < 2 * size]
    return BodyStyle(size, bold, statistics.median(leads) if leads else 1.2 * size)


def _edge(line: Line, height: float) -> bool:
    """Whether `line` is in the band at the top or the bottom of its page."""
    middle = (line.top + line.bottom) / 2
    return height > 0 and (middle > height * (1 - EDGE_SHARE) or middle < height * EDGE_SHARE)


def _outer(page: Sequence[Line], height: float) -> list[bool]:
    """For each line of `page`, whether it may be a running head, foot or page number:
    in the band at an edge, or in the first or last two rows of the page's text (R News
    sets its heads at 87% of the height, above a wide top margin)."""
    rows = sorted({round(line.bottom / _SAME_HEIGHT) for line in page})
    outer = set(rows[:_OUTER_ROWS]) | set(rows[-_OUTER_ROWS:])
    return [_edge(line, height) or round(line.bottom / _SAME_HEIGHT) in outer
            for line in page]


def _head_key(line: Line) -> str:
    """The text a running head repeats: casefolded, its numbers (the page's) aside."""
    return " ".join(_DIGITS.sub("#", line.plain.casefold()).split())


def without_furniture(pages: Sequence[Sequence[Line]], heights: Sequence[float],
                      title: str = "") -> list[list[Line]]:
    """`pages` without their running heads, running feet and page numbers."""
    outer = [_outer(page, height) for page, height in zip(pages, heights)]
    seen: defaultdict[str, list[tuple[int, float]]] = defaultdict(list)
    for index, page in enumerate(pages):
        for line, candidate in zip(page, outer[index]):
            if candidate:
                seen[_head_key(line)].append((index, line.bottom))
    own_title = letters(title)
    kept: list[list[Line]] = []
    for index, page in enumerate(pages):
        kept.append([line for line, candidate in zip(page, outer[index]) if not (
            candidate and _furniture(line, index, seen, own_title, heights[index]))])
    return kept


def _furniture(line: Line, page: int, seen: dict[str, list[tuple[int, float]]],
               title: str, height: float) -> bool:
    text = " ".join(line.plain.split())
    if not text or _PAGE_NUMBER.match(text):
        return True
    if any(other != page and abs(bottom - line.bottom) <= _SAME_HEIGHT
           for other, bottom in seen.get(_head_key(line), ())):
        return True
    # A running head that shortens the title: its words are the title's.
    own = letters(text)
    return _edge(line, height) and len(text.split()) >= 3 and len(own) >= 12 and own in title
