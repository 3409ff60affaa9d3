"""Papers typeset with reportlab as journals set them: a title and abstract across the
page, then two columns of text with numbered headings, running heads, page numbers,
footnotes with their marks, words hyphenated at line ends, figures with captions, a
reference list and an appendix; what tests/readers/test_pdf_body.py reads back.

Text is given as paragraphs; in it, "^1" is a footnote mark (set small and raised),
"-|" a hyphen that ends a line (the word goes on on the next), and "¶" sends the rest
to the next column (or page), so that a test knows where a sentence is broken.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reportlab.lib.pagesizes import letter
from reportlab.lib.utils import simpleSplit
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

__all__ = ["Typeset"]

WIDTH, HEIGHT = letter
BODY, LEAD = 10.0, 12.0
COLUMNS = ((54.0, 240.0), (318.0, 240.0))
TOP, BOTTOM = 720.0, 80.0
_MARK = re.compile(r"\^(\d)")


@dataclass
class Typeset:
    """A paper being typeset; `lines` records the page and column of each line of the
    columns' text."""

    path: Path
    running_head: str = ""
    first_page: int = 1  # the number printed on page 1 (and its page label, if `labels`)
    labels: bool = False
    canvas: Canvas = field(init=False)
    page: int = field(init=False, default=1)
    column: int = field(init=False, default=0)
    y: float = field(init=False, default=TOP)
    top: float = field(init=False, default=TOP)  # where this page's columns start
    lines: list[tuple[int, int, str]] = field(init=False, default_factory=list)
    notes: list[str] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.canvas = Canvas(str(self.path), pagesize=letter, pageCompression=0)
        if self.labels:
            self.canvas.addPageLabel(0, "D", self.first_page)

    # -- the front matter ------------------------------------------------------------------
    def front(self, title: str, authors: str, abstract: str) -> None:
        """Title, authors and abstract across the top of page 1; columns start below."""
        self.centred(title, "Times-Bold", 17, 740)
        self.centred(authors, "Times-Roman", 12, 716)
        self.centred("Abstract", "Times-Bold", 11, 690)
        y = 674.0
        for text in simpleSplit(abstract, "Times-Roman", BODY, 430):
            self.draw(91, y, text, "Times-Roman", BODY)
            y -= LEAD
        self.y = self.top = y - 2 * LEAD

    def centred(self, text: str, font: str, size: float, y: float) -> None:
        self.draw((WIDTH - stringWidth(text, font, size)) / 2, y, text, font, size)

    # -- the flow --------------------------------------------------------------------------
    def heading(self, text: str) -> None:
        self.room(3 * LEAD)
        self.y -= LEAD / 2
        self.line(text, "Times-Bold", 11)
        self.y -= LEAD / 4

    def paragraph(self, text: str, *, font: str = "Times-Roman", size: float = BODY,
                  indent: bool = True, figure: str = "") -> None:
        """`text` set in the columns; at its "¶", the next column starts with `figure`
        (a box and that caption), if given."""
        first = indent
        for number, piece in enumerate(text.split("¶")):
            if number:
                self.next_column()
                if figure:
                    self.caption(figure)
            chunks = piece.split("-|")
            for place, chunk in enumerate(chunks):
                lines = simpleSplit(chunk.strip(), font, size, COLUMNS[0][1] - 12 * first)
                for index, text_line in enumerate(lines):
                    broken = place < len(chunks) - 1 and index == len(lines) - 1
                    self.line(text_line + "-" * broken, font, size, 12 * first)
                    first = False
        self.y -= 2

    def caption(self, text: str, height: float = 80) -> None:
        """A figure (a box) and its caption, set in 9 pt, where the column now is."""
        self.room(height + 3 * LEAD)
        x, width = COLUMNS[self.column]
        self.canvas.rect(x, self.y - height, width, height)
        self.y -= height + LEAD
        for text_line in simpleSplit(text, "Times-Roman", 9, width):
            self.line(text_line, "Times-Roman", 9)
        self.y -= LEAD

    def footnote(self, text: str) -> None:
        """A footnote at the foot of the current column's page (8 pt), its mark raised."""
        self.notes.append(text)

    def references(self, entries: Sequence[str]) -> None:
        self.heading("References")
        for entry in entries:
            self.paragraph(entry, size=9, indent=False)

    # -- drawing ---------------------------------------------------------------------------
    def line(self, text: str, font: str, size: float, indent: float = 0) -> None:
        self.room(LEAD)
        self.draw(COLUMNS[self.column][0] + indent, self.y, text, font, size)
        self.lines.append((self.page, self.column, _MARK.sub("", text)))
        self.y -= LEAD if size >= 9 else size * 1.2

    def draw(self, x: float, y: float, text: str, font: str, size: float) -> None:
        """`text` at (x, y), each "^N" in it set as a raised footnote mark."""
        drawn = self.canvas.beginText(x, y)
        for number, piece in enumerate(_MARK.split(text)):
            if number % 2:
                drawn.setFont(font, size * 0.6)
                drawn.setRise(size * 0.4)
                drawn.textOut(piece)
                drawn.setRise(0)
            else:
                drawn.setFont(font, size)
                drawn.textOut(piece)
        self.canvas.drawText(drawn)

    def where(self, text: str) -> tuple[int, int]:
        """The page and column `text` starts on (it may run over lines)."""
        stream, starts = "", []
        for page, column, line in self.lines:
            starts.append((len(stream), page, column))
            stream += line[:-1] if line.endswith("-") else line + " "
        found = stream.find(text)
        assert found >= 0, text
        return max((start, page, column) for start, page, column in starts
                   if start <= found)[1:]

    def page_of(self, text: str) -> int:
        return self.where(text)[0]

    def column_of(self, text: str) -> int:
        return self.where(text)[1]

    def room(self, needed: float) -> None:
        if self.y - needed < BOTTOM + (14 * len(self.notes) if self.column == 0 else 0):
            self.next_column()

    def next_column(self) -> None:
        if self.column == 0:
            self.column, self.y = 1, self.top
            return
        self.end_page()
        self.column, self.y = 0, TOP

    def end_page(self) -> None:
        for number, note in enumerate(self.notes):
            self.draw(54, BOTTOM - 10 - 10 * number, note, "Times-Roman", 8)
        self.notes = []
        printed = str(self.first_page + self.page - 1)
        self.centred(printed, "Times-Roman", 9, 40)
        if self.running_head and self.page > 1:
            self.centred(self.running_head, "Times-Italic", 9, 760)
        self.canvas.showPage()
        self.page += 1
        self.top = TOP

    def save(self) -> Path:
        self.end_page()
        self.canvas.save()
        return self.path
