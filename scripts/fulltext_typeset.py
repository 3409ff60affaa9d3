"""The typesetter of scripts/fulltext_devset.py: a paper drawn with reportlab as journals
print one, recording the page every sentence lands on.

Page 1 has the title, authors and abstract across the page; the body follows in two
justified columns with a running head (short title, authors) on every later page, the
page number (its printed label) at the foot, numbered headings, footnotes at the foot of
their column, words hyphenated where a line breaks them, figures with captions and a
reference list. Every body word carries its paragraph and sentence (`Word.tag`), so
the ground truth (which page holds which sentence) comes from the drawing itself and
from no reader.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from reportlab.lib.pagesizes import letter
from reportlab.lib.utils import simpleSplit
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

__all__ = ["BODY", "CAPTION", "REFERENCE", "Font", "Printed", "Typesetter", "Word"]

WIDTH, HEIGHT = letter
MARGIN = 54.0
GAP = 18.0
COLUMN = (WIDTH - 2 * MARGIN - GAP) / 2
TOP = HEIGHT - 66.0        # the first baseline of a column under the running head
BOTTOM = 60.0              # the lowest baseline of a column; the page number is below
FOOTNOTE_LEADING = 8.6
VOWELS = set("aeiouy")


@dataclass(frozen=True)
class Font:
    name: str
    size: float
    leading: float


BODY = Font("Times-Roman", 9.6, 11.6)
CAPTION = Font("Times-Roman", 8.2, 9.8)
REFERENCE = Font("Times-Roman", 8.0, 9.6)
FOOTNOTE = Font("Times-Roman", 7.2, FOOTNOTE_LEADING)

#: (paragraph number, sentence number) of a word, None for words no question asks about.
Tag = tuple[int, int]


@dataclass
class Word:
    text: str
    tag: Tag
    #: A footnote number set as a superscript after the word.
    marker: str = ""


@dataclass
class Printed:
    """One paragraph as it was printed: its sentences and the pages each is on."""

    kind: str
    section: str
    sentences: list[str]
    pages: list[list[int]] = field(default_factory=list)


class Typesetter:
    """A PDF written top down, column after column; `printed` says where each sentence went."""

    def __init__(self, path: Path, *, title: str, authors: str, head_title: str,
                 head_authors: str, first_label: int) -> None:
        self.canvas = Canvas(str(path), pagesize=letter, pageCompression=1, invariant=1)
        self.canvas.setTitle(title)
        self.canvas.setAuthor(authors)
        self.head = (head_title, head_authors)
        self.first_label = first_label
        self.page, self.column, self.y, self.column_top = 1, 0, TOP, TOP
        self.reserved = 0.0                  # footnote height kept at this column's foot
        self.footnotes: list[list[str]] = []  # the footnotes of this column, as lines
        self.section = ""
        self.printed: list[Printed] = []
        self.figures = 0

    # -- page furniture -------------------------------------------------------------
    def label(self, page: int | None = None) -> str:
        """The page number printed at the foot of `page` (default: this one)."""
        return str(self.first_label + (page or self.page) - 1)

    def front(self, title: str, authors: str, affiliation: str, abstract: str) -> None:
        """Page 1's top: the title, authors, affiliation and abstract across the page."""
        canvas, y = self.canvas, HEIGHT - 84
        for font, size, leading, text, width in (
                ("Times-Bold", 16.5, 20, title, WIDTH - 2 * MARGIN - 40),
                ("Times-Roman", 11, 13.5, authors, WIDTH - 2 * MARGIN),
                ("Times-Italic", 9.5, 12, affiliation, WIDTH - 2 * MARGIN)):
            for line in simpleSplit(text, font, size, width):
                canvas.setFont(font, size)
                canvas.drawCentredString(WIDTH / 2, y, line)
                y -= leading
            y -= 6
        canvas.setFont("Times-Bold", 11)
        canvas.drawCentredString(WIDTH / 2, y - 6, "Abstract")
        y -= 22
        for line in simpleSplit(abstract, "Times-Roman", 9.6, WIDTH - 2 * MARGIN - 72):
            canvas.setFont("Times-Roman", 9.6)
            canvas.drawString(MARGIN + 36, y, line)
            y -= 11.6
        self.y = self.column_top = y - 16

    def _running_head(self) -> None:
        canvas = self.canvas
        canvas.setFont("Times-Italic", 8.5)
        canvas.drawString(MARGIN, HEIGHT - 40, self.head[0])
        canvas.drawRightString(WIDTH - MARGIN, HEIGHT - 40, self.head[1])
        canvas.setLineWidth(0.4)
        canvas.line(MARGIN, HEIGHT - 45, WIDTH - MARGIN, HEIGHT - 45)

    def _foot(self) -> None:
        self.canvas.setFont("Times-Roman", 9)
        self.canvas.drawCentredString(WIDTH / 2, 34, self.label())

    def _x(self) -> float:
        return float(MARGIN + self.column * (COLUMN + GAP))

    def next_column(self) -> None:
        """Close this column (its footnotes drawn) and go on at the top of the next."""
        self._draw_footnotes()
        if self.column == 1:
            self.new_page()
            return
        self.column, self.y = 1, self.column_top

    def new_page(self) -> None:
        """Close the page and start the next at the top of its left column."""
        if self.column == 0:
            self._draw_footnotes()
        self._foot()
        self.canvas.showPage()
        self.page += 1
        self.column, self.y = 0, TOP
        self.column_top = TOP
        self._running_head()

    def _draw_footnotes(self) -> None:
        if not self.footnotes:
            return
        lines = [line for note in self.footnotes for line in note]
        x, y = self._x(), BOTTOM + (len(lines) - 1) * FOOTNOTE_LEADING
        self.canvas.setLineWidth(0.4)
        self.canvas.line(x, y + FOOTNOTE_LEADING + 1, x + 60, y + FOOTNOTE_LEADING + 1)
        for line in lines:
            self.canvas.setFont(FOOTNOTE.name, FOOTNOTE.size)
            self.canvas.drawString(x, y, line)
            y -= FOOTNOTE_LEADING
        self.footnotes, self.reserved = [], 0.0

    def _room(self, height: float) -> None:
        """A column break unless `height` more points fit above this column's floor."""
        if self.y - height < BOTTOM + self.reserved - 1e-6:
            self.next_column()

    # -- text -------------------------------------------------------------------------
    def heading(self, text: str, level: int = 1) -> None:
        """A numbered heading ("3.1 Training"), kept with two lines of what follows."""
        size = 10.8 if level == 1 else 9.8
        if self.y < self.column_top:
            self.y -= 6 if level == 1 else 3
        self._room(size + 2 * BODY.leading)
        self.canvas.setFont("Times-Bold", size)
        self.canvas.drawString(self._x(), self.y, text)
        self.y -= size * 1.45
        self.section = text

    def paragraph(self, sentences: list[str], *, kind: str = "body", font: Font = BODY,
                  indent: float = 10.0, notes: dict[int, str] | None = None,
                  justify: bool = True) -> Printed:
        """`sentences` as one justified paragraph; `notes` maps a sentence number to the
        footnote whose marker follows it."""
        number = len(self.printed)
        printed = Printed(kind, self.section, sentences, [[] for _ in sentences])
        self.printed.append(printed)
        queue: deque[Word] = deque()
        for index, sentence in enumerate(sentences):
            words = [Word(text, (number, index)) for text in sentence.split()]
            if notes and index in notes:
                words[-1].marker = self._footnote(notes[index])
            queue.extend(words)
        first, line = True, list[Word]()
        while queue:
            word = queue.popleft()
            room = COLUMN - (indent if first else 0.0)
            if not line or _width(line + [word], font) <= room:
                line.append(word)
                continue
            split = _hyphenate(word, room - _width(line, font) - _space(font), font)
            if split:
                line.append(split[0])
                queue.appendleft(split[1])
            else:
                queue.appendleft(word)
            self._line(line, font, indent if first else 0.0, justify)
            first, line = False, []
        if line:
            self._line(line, font, indent if first else 0.0, False)
        self.y -= font.leading * 0.25
        return printed

    def _footnote(self, text: str) -> str:
        marker = str(sum(1 for p in self.printed if p.kind == "footnote") + 1)
        self.printed.append(Printed("footnote", self.section, [text], [[]]))
        return marker

    def _line(self, words: list[Word], font: Font, indent: float, justify: bool) -> None:
        notes = [self._note_lines(word.marker) for word in words if word.marker]
        extra = sum(len(lines) * FOOTNOTE_LEADING for lines in notes) + \
            (4.0 if notes and not self.footnotes else 0.0)
        self._room(font.leading * 0.2 + extra)
        canvas, x = self.canvas, self._x() + indent
        gaps = len(words) - 1
        spare = COLUMN - indent - _width(words, font)
        text = canvas.beginText(x, self.y)
        text.setFont(font.name, font.size)
        text.setWordSpace(spare / gaps if justify and gaps and spare > 0 else 0.0)
        for position, word in enumerate(words):
            text.textOut(word.text)
            if word.marker:
                text.setFont(font.name, font.size * 0.68)
                text.setRise(font.size * 0.38)
                text.textOut(word.marker)
                text.setRise(0)
                text.setFont(font.name, font.size)
            if position < gaps:
                text.textOut(" ")
        canvas.drawText(text)
        for word in words:
            pages = self.printed[word.tag[0]].pages[word.tag[1]]
            if self.page not in pages:
                pages.append(self.page)
        for lines in notes:
            self.footnotes.append(lines)
            self.reserved += len(lines) * FOOTNOTE_LEADING
        if notes and len(self.footnotes) == len(notes):
            self.reserved += 4.0
        for marker in (word.marker for word in words if word.marker):
            self.printed[self._note_index(marker)].pages[0].append(self.page)
        self.y -= font.leading

    def _note_index(self, marker: str) -> int:
        notes = [i for i, p in enumerate(self.printed) if p.kind == "footnote"]
        return notes[int(marker) - 1]

    def _note_lines(self, marker: str) -> list[str]:
        text = self.printed[self._note_index(marker)].sentences[0]
        return [str(line) for line in
                simpleSplit(f"{marker} {text}", FOOTNOTE.name, FOOTNOTE.size, COLUMN)]

    def figure(self, caption: list[str]) -> Printed:
        """A plot's frame, axes and curves, and its caption below, in this column (or at
        the top of the next when it does not fit)."""
        self.figures += 1
        lines = simpleSplit(" ".join(caption), CAPTION.name, CAPTION.size, COLUMN)
        box = 104.0
        self._room(box + len(lines) * CAPTION.leading + 8)
        canvas, x, top = self.canvas, self._x(), self.y + BODY.size
        canvas.setLineWidth(0.6)
        canvas.rect(x + 12, top - box, COLUMN - 24, box - 8)
        for curve in range(3):
            points = [(x + 20 + step * (COLUMN - 44) / 9,
                       top - box + 10 + (curve + 1) * 14 + ((step * (curve + 2)) % 5) * 6)
                      for step in range(10)]
            for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
                canvas.line(x0, y0, x1, y1)
        self.y = top - box - CAPTION.leading
        printed = self.paragraph(caption, kind="caption", font=CAPTION, indent=0.0,
                                 justify=False)
        self.y -= 6
        return printed

    def save(self) -> None:
        self._draw_footnotes()
        self._foot()
        self.canvas.showPage()
        self.canvas.save()


def _space(font: Font) -> float:
    return float(stringWidth(" ", font.name, font.size))


def _width(words: list[Word], font: Font) -> float:
    width = sum(float(stringWidth(word.text, font.name, font.size)) for word in words)
    width += sum(float(stringWidth(word.marker, font.name, font.size * 0.68)) for word in words)
    return width + _space(font) * (len(words) - 1)


def _hyphenate(word: Word, room: float, font: Font) -> tuple[Word, Word] | None:
    """`word` cut in two at the last break whose first part (with its hyphen) fits in
    `room`: after a hyphen it has, else between letters where a syllable may end (never
    within the first or last three letters), as TeX breaks a word at a line's end."""
    text = word.text
    fits = [cut for cut in _breaks(text)
            if stringWidth(text[:cut] + ("" if text[cut - 1] == "-" else "-"),
                           font.name, font.size) <= room]
    if not fits:
        return None
    cut = fits[-1]
    head = text[:cut] if text[cut - 1] == "-" else text[:cut] + "-"
    return Word(head, word.tag), Word(text[cut:], word.tag, word.marker)


def _breaks(text: str) -> list[int]:
    """Where `text` may be broken, in order: after its hyphens, else between two
    consonants or after a vowel before a consonant, inside its longest run of letters."""
    hyphens = [i + 1 for i, char in enumerate(text) if char == "-" and 1 < i < len(text) - 2]
    if hyphens:
        return hyphens
    core = text.rstrip(".,;:)?!'\"")
    if len(core) < 7 or not core.isalpha():
        return []
    lower = core.lower()
    return [cut for cut in range(3, len(core) - 2)
            if (lower[cut - 1] not in VOWELS and lower[cut] not in VOWELS)
            or (lower[cut - 1] in VOWELS and lower[cut] not in VOWELS
                and lower[cut + 1] in VOWELS)]
