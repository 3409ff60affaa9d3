"""A PDF's pages as lines of text, each with its place, font size and weight.

PDFium (through pypdfium2) gives every character of a page with its font size, box,
weight and angle, in the order the page draws them, with its own line breaks and word
spaces inserted. For a typeset paper that order is the reading order: LaTeX, Word and
Typst draw a two-column page column by column, so the abstract in the left column
comes before the right column's text. Here the characters become `Line`s; the rules
that find a title or an abstract among them are in `fields`.

Everything that can go wrong opening a file ends as `Unreadable` with a reason a user
can act on; PDFium's own error codes are translated here.
"""

from __future__ import annotations

import ctypes
import math
import re
import statistics
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

__all__ = ["Document", "Line", "Unreadable", "open_document", "reading_order"]

#: A character at least this heavy (PDF font weights: 400 regular, 700 bold) is bold.
_BOLD_WEIGHT = 650
#: A gap wider than this many font sizes on one baseline splits a line: two columns
#: drawn on one baseline by PDFium, or a table's cells, are not one line of prose.
_COLUMN_GAP = 3.0
#: Characters smaller than this share of their line's size are super- or subscripts
#: (footnote marks after an author's name, affiliation numbers), left out of the text.
_SCRIPT_SHARE = 0.75
# PDFium's marks for a hyphen that breaks a word at a line end (its text API writes
# 0xFFFE; the character API gives 0x02, and an ordinary "-" is asked with IsHyphen).
#: Drawing order is taken as reading order unless the lines of a page's two halves
#: alternate at least this often (a page drawn row by row across its columns).
_INTERLEAVED = 0.3
#: A loose glyph box this many font sizes high (its font's ascent to descent) agrees
#: with the font size; outside it, the size is taken from the text matrix.
_SIZE_AGREES = (0.5, 2.0)
_SOFT_HYPHENS = {0x02, 0xAD, 0xFFFE}
_DASH = 0x2D
_LOOSE_ACCENT = re.compile(r"(?:(?<=\s)|^)[\u0300-\u036f]+")
_HYPHEN = "\u00ad"
_LINE_ENDS = {0x0D, 0x0A}


class Unreadable(Exception):
    """The file cannot be read as a PDF; the message says why in a user's words."""


@dataclass(frozen=True, slots=True)
class Line:
    """One line of text on a page: its text, box (PDF points, y upwards), font size
    (the median of its characters') and whether most of it is bold. `plain` is the text
    without its super- and subscripts: an author's name without the mark that points
    to an affiliation. `hyphenated`: the line ends in a word broken by a hyphen, which
    the next line finishes."""

    page: int
    text: str
    plain: str
    x0: float
    x1: float
    bottom: float
    top: float
    size: float
    bold: bool
    hyphenated: bool = False

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass
class Document:
    """What the reader needs of one PDF: its metadata, page count and page lines."""

    path: Path
    pdf: pdfium.PdfDocument
    metadata: dict[str, str]
    pages: int

    def lines(self, index: int) -> tuple[list[Line], str]:
        """The lines of page `index` (0-based) in reading order, and its rotated text
        (the arXiv stamp in the margin is drawn at 90 degrees)."""
        page = self.pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                lines, rotated = _page_lines(textpage, index)
            finally:
                textpage.close()
            return reading_order(lines, float(page.get_width())), rotated
        finally:
            page.close()

    def height(self, index: int) -> float:
        """The height of page `index` in PDF points, read without loading the page."""
        try:
            return float(self.pdf.get_page_size(index)[1])
        except pdfium.PdfiumError:
            return 0.0

    def label(self, index: int) -> str:
        """The page number the PDF prints for page `index` ("iv", "356"; its page
        labels), or "" when the file names its pages only by their position."""
        try:
            return _clean(self.pdf.get_page_label(index))
        except (pdfium.PdfiumError, UnicodeDecodeError):
            return ""

    def has_images(self, index: int) -> bool:
        """Whether page `index` draws any image: a page of images and no text is a scan."""
        page = self.pdf[index]
        try:
            return any(True for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE],
                                                      max_depth=3))
        finally:
            page.close()

    def close(self) -> None:
        self.pdf.close()


_OPEN_ERRORS = {
    pdfium_c.FPDF_ERR_PASSWORD: "encrypted: it needs a password to open",
    pdfium_c.FPDF_ERR_SECURITY: "encrypted with a security handler PDFium does not support",
    pdfium_c.FPDF_ERR_FORMAT: "damaged: not a PDF, or its structure is broken",
    pdfium_c.FPDF_ERR_FILE: "cannot be opened (is it readable?)",
    pdfium_c.FPDF_ERR_PAGE: "damaged: its pages cannot be found",
}


def open_document(path: Path, max_bytes: int) -> Document:
    """`path` opened with PDFium; `Unreadable` with the reason when it cannot be."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(1024)
    except OSError as exc:
        raise Unreadable(f"cannot be opened ({exc.strerror or exc})") from None
    if size == 0:
        raise Unreadable("damaged: the file is empty")
    if size > max_bytes:
        raise Unreadable(f"too large to read: {size / 1e6:.0f} MB (the limit is "
                         f"{max_bytes / 1e6:.0f} MB)")
    if b"%PDF-" not in head:  # the header may follow a few bytes of junk, as readers allow
        raise Unreadable("damaged: not a PDF (no %PDF- header at its start)")
    try:
        pdf = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        raise Unreadable(_OPEN_ERRORS.get(code, f"damaged: {exc}")) from None
    try:
        metadata = {key: _clean(str(value)) for key, value in pdf.get_metadata_dict().items()}
    except pdfium.PdfiumError:
        metadata = {}
    return Document(path, pdf, metadata, len(pdf))


def _clean(text: str) -> str:
    """Ligatures split (NFKC: "ﬁ" is "fi"), control characters and hyphenation marks
    dropped, spaces collapsed. An accent that LaTeX drew apart from its letter ("Re´nyi"
    reads "Renyi ́") is dropped: which letter it belongs to is not in the text."""
    text = _LOOSE_ACCENT.sub("", unicodedata.normalize("NFKC", text))
    text = "".join(char for char in text if char.isprintable() or char == " ")
    return unicodedata.normalize("NFC", " ".join(text.split()))


@dataclass
class _Char:
    char: str
    x0: float
    x1: float
    bottom: float
    top: float
    size: float
    bold: bool
    generated: bool


def _page_lines(textpage: pdfium.PdfTextPage, index: int) -> tuple[list[Line], str]:
    lines: list[Line] = []
    rotated: list[str] = []
    for run in _runs(textpage, rotated):
        for part in _split_at_gaps(run):
            line = _line(part, index)
            if line is not None:
                lines.append(line)
    return lines, "".join(rotated)


def _runs(textpage: pdfium.PdfTextPage, rotated: list[str]) -> Iterator[list[_Char]]:
    """The page's characters in drawing order, cut at PDFium's line ends; rotated
    characters go to `rotated` instead."""
    box = pdfium_c.FS_RECTF()
    matrix = pdfium_c.FS_MATRIX()
    run: list[_Char] = []
    for i in range(pdfium_c.FPDFText_CountChars(textpage)):
        code = pdfium_c.FPDFText_GetUnicode(textpage, i)
        if code in _LINE_ENDS:
            if run:
                yield run
            run = []
            continue
        if code in _SOFT_HYPHENS or (code == _DASH
                                     and pdfium_c.FPDFText_IsHyphen(textpage, i)):
            if run:  # kept as a mark, so that the line's end is known to break a word
                run.append(_Char(_HYPHEN, run[-1].x1, run[-1].x1, run[-1].bottom,
                                 run[-1].top, run[-1].size, run[-1].bold, True))
            continue
        if code < 0x20:
            continue
        angle = pdfium_c.FPDFText_GetCharAngle(textpage, i)
        if 0.01 < angle < 2 * math.pi - 0.01:
            rotated.append(chr(code))
            continue
        generated = bool(pdfium_c.FPDFText_IsGenerated(textpage, i))
        pdfium_c.FPDFText_GetLooseCharBox(textpage, i, ctypes.byref(box))
        size = _drawn_size(textpage, i, box.top - box.bottom, matrix)
        weight = pdfium_c.FPDFText_GetFontWeight(textpage, i)
        run.append(_Char(chr(code), box.left, box.right, box.bottom, box.top, size,
                         weight >= _BOLD_WEIGHT, generated))
    if run:
        yield run


def _drawn_size(textpage: pdfium.PdfTextPage, index: int, height: float,
                matrix: pdfium_c.FS_MATRIX) -> float:
    """The size a character is drawn at: PDFium's font size is the one the text sets
    (`Tf`), which some producers leave at 1 while the text matrix scales every glyph
    to its real size (a 10.9 pt body then reads as 1 pt, and every word gap looks like
    a column gap). The matrix's vertical scale times the set size is the drawn size
    whichever way a producer splits it. The matrix is asked for only when the glyph's
    box (`height`, about 1.1 sizes) says the set size is not the drawn one: the extra
    call for every character would cost a sixth of a page's time."""
    size = float(pdfium_c.FPDFText_GetFontSize(textpage, index))
    if _SIZE_AGREES[0] * size <= height <= _SIZE_AGREES[1] * size or height <= 0:
        return size
    if not pdfium_c.FPDFText_GetMatrix(textpage, index, ctypes.byref(matrix)):
        return size
    scale = math.hypot(matrix.c, matrix.d)
    return size * scale if scale > 0 else size


def _split_at_gaps(run: list[_Char]) -> Iterator[list[_Char]]:
    """A run cut where the next character starts far to the right of the last one, or
    back at the left: PDFium joins text it draws on one baseline."""
    start = 0
    last: _Char | None = None
    for i, char in enumerate(run):
        if char.generated or char.char == " ":
            continue
        if last is not None:
            gap = char.x0 - last.x1
            if gap > _COLUMN_GAP * max(char.size, last.size) or gap < -5 * char.size:
                yield run[start:i]
                start = i
        last = char
    yield run[start:]


def _line(chars: list[_Char], page: int) -> Line | None:
    visible = [char for char in chars if not char.char.isspace() and char.size > 0]
    if not visible:
        return None
    size = statistics.median(char.size for char in visible)
    # Footnote marks and affiliation numbers are set small: `plain` leaves them out.
    kept = [char for char in chars if char.generated or char.char.isspace()
            or char.size >= _SCRIPT_SHARE * size]
    text = _clean("".join(char.char for char in chars))
    if not text:
        return None
    ends = [char.char for char in chars if not char.char.isspace()]
    return Line(page=page, text=text, plain=_clean("".join(char.char for char in kept)),
                hyphenated=bool(ends) and ends[-1] == _HYPHEN,
                x0=min(char.x0 for char in visible),
                x1=max(char.x1 for char in visible),
                bottom=min(char.bottom for char in visible),
                top=max(char.top for char in visible), size=round(size, 2),
                bold=sum(char.bold for char in visible) * 2 > len(visible))


def reading_order(lines: list[Line], width: float) -> list[Line]:
    """`lines` in reading order. Drawing order is reading order on nearly every typeset
    page (two columns are drawn one after the other); a page drawn row by row across
    its columns, as some converters and OCR layers do, is put in column order instead:
    from the top, each line that spans the middle, and between them the left column's
    lines, then the right column's."""
    middle = width / 2
    sides = [0 if line.x1 <= middle else 1 if line.x0 >= middle else -1 for line in lines]
    halves = [side for side in sides if side >= 0]
    switches = sum(a != b for a, b in zip(halves, halves[1:]))
    if len(halves) < 8 or switches < _INTERLEAVED * len(halves):
        return lines
    ordered: list[Line] = []
    band: list[tuple[Line, int]] = []
    for line, side in sorted(zip(lines, sides), key=lambda pair: -pair[0].top):
        if side < 0:
            ordered += _by_column(band)
            band = []
            ordered.append(line)
        else:
            band.append((line, side))
    return ordered + _by_column(band)


def _by_column(band: list[tuple[Line, int]]) -> list[Line]:
    return [line for line, side in band if side == 0] + [line for line, side in band if side]
