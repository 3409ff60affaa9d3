"""A PDF's body as `Block`s: its paragraphs in reading order, each on the page it starts
on and under the heading of its section, with what is not the paper's text left out.

Every page's lines (`layout`, already in column order) are read in turn: running heads,
feet and page numbers go first (`cleaning`), then the front matter up to the end of
the abstract (the title, authors and abstract are the paper's own fields, not body
passages). The rest is read as a flow (`flow`) of paragraphs, asides (captions,
footnotes) and sections, without the reference list. Each paragraph becomes blocks of
whole sentences, one per page it runs over (a sentence belongs to the page it starts
on), with line-end hyphens mended as the abstract's are (`hyphens`); what does not read
as text (a figure's labels, a table's numbers) is left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...papers import Block, split_sentences
from .cleaning import BodyStyle, body_style, letters, without_furniture
from .fields import BARRED_KEYWORDS
from .flow import Flow, Group, heading_at
from .headings import named
from .hyphens import BREAK, Spelling, mend_breaks
from .layout import Document, Line

__all__ = ["FRONT_PAGES", "MAX_BODY_PAGES", "body_blocks", "read_body"]

#: Pages of a body read at most. A paper is rarely over 100 pages and a thesis about 300;
#: past 600 a PDF is a book or a volume of proceedings, whose first 600 pages stand for
#: it rather than letting one file hold the build for minutes: 600 pages of the real
#: PDFs of tests/data/pdfs/real took 9 to 20 s to read in full (2-core EPYC, idle or
#: loaded; scripts/pdf_body_cost.py) and gave about 2,500 passages, within
#: `passages.MAX_PASSAGES`.
MAX_BODY_PAGES = 600
#: Pages the front matter (title, authors, abstract, keywords) is looked for on: the
#: pages the abstract is read from (`extraction.PAGES_READ`).
FRONT_PAGES = 3
#: Words a block must have to be text, and the share of a sentence's words that must be
#: words of letters (a figure's axis labels, a table's numbers, an equation are not).
_MIN_WORDS = 5
_CAPTION_MIN_WORDS = 2
_LETTERED_SHARE = 0.5
#: Letters of the abstract's end looked for among the first pages' lines.
_ABSTRACT_TAIL = 40
_LETTERED = re.compile(r"[^\W\d_]{2,}")
# The keywords after an abstract (PNAS's between bars: `fields.BARRED_KEYWORDS`).
_KEYWORDS = re.compile(r"^\W*(?:key\s?words?|index terms|subjects?|ccs concepts|msc|jel|pacs)"
                       r"\b", re.IGNORECASE)
# Headings of the front matter, which the body does not start under.
_FRONT_HEADINGS = re.compile(r"^\W*(?:abstract|summary|contents|keywords?)\W*$", re.IGNORECASE)
# A footnote's number glued to its first word ("4macOS users ...", "2Within base R").
_NOTE_NUMBER = re.compile(r"^\d{1,2}(?=[^\W\d_][a-z])")
# Where a paragraph moves to the next page, until its sentences are placed on pages.
_PAGE_MARK = "\ue000"  # a private-use character: no space, no word


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
    # The keywords after the abstract are front matter wherever the body starts.
    body = [line for line in lines[start:]
            if not (line.page < FRONT_PAGES and (_KEYWORDS.match(line.plain)
                                                 or BARRED_KEYWORDS.match(line.plain)))]
    groups = Flow(style, section).read(body)
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
                  if (found := heading_at(lines, index, style)) is not None
                  and named(found[0]) and not _FRONT_HEADINGS.match(found[0])]
        return after, before[-1] if before else ""
    last_page = lines[after - 1].page if after else 0
    for index in range(after, front):
        if lines[index].page > last_page + 1:
            break
        if heading_at(lines, index, style) is not None:
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


def _blocks(group: Group, spelling: Spelling, labels: Sequence[str], abstract: str
            ) -> list[Block]:
    """`group` as blocks of whole sentences, one for each page a sentence starts on,
    without the sentences that are not text (most of their words not of letters: an
    equation, a table's numbers); none when too few words are left, or when it repeats
    the abstract."""
    text = mend_breaks(_joined(group.lines, pages=True,
                               notes=group.aside and not group.caption), spelling)
    plain = text.replace(_PAGE_MARK, "")
    sentences = [sentence for sentence in split_sentences(plain) if _lettered(sentence)]
    least = _CAPTION_MIN_WORDS if group.caption else _MIN_WORDS
    if sum(len(sentence.split()) for sentence in sentences) < least:
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
    for sentence in sentences:
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


def _lettered(sentence: str) -> bool:
    """Whether most words of `sentence` are words of letters (two or more)."""
    words = sentence.split()
    return sum(bool(_LETTERED.search(word)) for word in words) >= _LETTERED_SHARE * len(words)
