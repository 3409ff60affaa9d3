"""An item's body read in full: from Zotero's own full-text cache where it has one, else
from its PDF.

Zotero extracts the text of every PDF, EPUB and HTML snapshot it indexes and keeps it
beside the attachment, in `storage/KEY/.zotero-ft-cache` (for a linked file too: in
the attachment's own storage folder). Reading that file costs milliseconds where
parsing a PDF costs a second, and it is the only text there is of an EPUB or a web
page. Zotero 7 writes a PDF's text page by page, a form feed between pages, each
paragraph on a line of its own (its PDF worker's `getFullText`); older versions ran
pdftotext without page breaks, and EPUB and HTML text has no pages: such text gives
passages without a page. `fulltextItems` says when the cache holds only the first
pages (Zotero's `fulltext.pdfMaxPages`, 100 by default): a PDF is then parsed in full,
as it is when its cache is older than the file or missing.

Of an item's attachments, one is read: its first PDF, else its first EPUB, else its
first HTML snapshot, that has a cache or (a PDF) a file here. `stamp` says which, and
the size and modification time of its file and cache: what `sync` compares to read an
attachment again only when it changed.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...papers import Block, Passage
from ...passages import split_passages
from ..pdf import PdfExtraction, extract_pdf
from ..pdf.hyphens import BREAK, Spelling, mend_breaks
from .tables import Indexed

__all__ = ["CACHE_FILE", "MAX_CACHE_BYTES", "READ_TYPES", "Attachment", "Body",
           "cache_blocks", "chosen_attachment", "read_body", "stamp"]

#: The file Zotero keeps an attachment's extracted text in (`Zotero.FullText`).
CACHE_FILE = ".zotero-ft-cache"
#: The attachment types read in full, in the order one is chosen: a PDF (its cache, or
#: the file parsed), else an EPUB's or a web snapshot's cache.
READ_TYPES = ("application/pdf", "application/epub+zip", "text/html")
_PDF = "application/pdf"
#: Bytes of a cache read at most. `passages.MAX_PASSAGES` windows of about 100 words
#: take some 2.5 MB of English text; a cache larger than this (a book's EPUB) gives no
#: more passages, only more to hold in memory while it is split.
MAX_CACHE_BYTES = 8 * 1024 * 1024
#: Pages a line must open or close to be taken for a running head or foot (when there
#: are at least this many pages): fewer repeats are more often a real line.
_RUNNING_MIN_PAGES = 3
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?(?:\d{1,4}|[ivx]{1,5})(?:\s*(?:/|of)\s*\d{1,4})?$",
                          re.IGNORECASE)
#: A numbered heading: "3 Method", "4.1. Results", "A.2 Proofs"; no full stop.
_NUMBERED = re.compile(r"^(?:\d{1,2}|[A-H])(?:\.\d{1,2}){0,3}\.?\s+[A-Z][^.!?]{1,80}$")
#: Words a heading never ends with, and a line broken inside a sentence often does.
_CONTINUED = frozenset({"a", "an", "and", "as", "at", "by", "for", "from", "in", "of", "on",
                        "or", "the", "to", "with"})
_HEADING_WORDS = 8
_NAMED = re.compile(r"^(?:abstract|introduction|background|related work|conclusions?|"
                    r"discussion|acknowledg(?:e)?ments?|references|bibliography|"
                    r"literature cited|works cited|appendix(?:\s+[A-Z0-9].*)?|appendices|"
                    r"supplementary material)$", re.IGNORECASE)
_REFERENCES = re.compile(r"^(?:\d{1,2}\.?\s+)?(?:references|bibliography|literature cited|"
                         r"works cited)$", re.IGNORECASE)
_AFTER_REFERENCES = re.compile(r"^(?:appendix|appendices|supplementary|[A-H](?:\.\d+)*\.?\s)",
                               re.IGNORECASE)
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Attachment:
    """One attachment that may be read in full: its key, its file (None when it cannot
    be found here: a linked file under an unknown base folder), its content type, where
    Zotero's cache of its text is (present or not), and how much of it Zotero cached."""

    key: str
    path: Path | None
    content_type: str
    cache: Path
    indexed: Indexed = Indexed()

    @property
    def is_pdf(self) -> bool:
        return self.content_type == _PDF

    def file_here(self) -> bool:
        return self.path is not None and self.path.is_file()

    def cache_usable(self) -> bool:
        """Whether its cache is the text to read: present, not empty, and (a PDF) whole
        and no older than the file."""
        try:
            cached = self.cache.stat()
        except OSError:
            return False
        if not cached.st_size:
            return False
        if not self.is_pdf or not self.file_here():
            return True
        assert self.path is not None
        return not self.indexed.partial and cached.st_mtime_ns >= self.path.stat().st_mtime_ns


@dataclass(frozen=True)
class Body:
    """What reading an attachment in full gave: its passages, the file they are from
    ("" when there are none, or the file is not here), where the text came from
    ("Zotero's full-text cache", "the PDF"), the PDF's extraction when the PDF was
    parsed (its abstract), and why no passage was read ("" when some were)."""

    passages: tuple[Passage, ...]
    file: str
    source: str
    extraction: PdfExtraction | None = None
    skipped: str = ""


def chosen_attachment(attachments: Sequence[Attachment]) -> Attachment | None:
    """The attachment of an item read in full (see the module's docstring), or None."""
    for kind in READ_TYPES:
        for attachment in attachments:
            if attachment.content_type != kind:
                continue
            if attachment.cache_usable() or (attachment.is_pdf and attachment.file_here()):
                return attachment
    return None


def _stat(path: Path | None) -> tuple[int, int]:
    try:
        found = path.stat() if path is not None else None
    except OSError:
        found = None
    return (found.st_size, found.st_mtime_ns) if found is not None else (-1, -1)


def stamp(attachment: Attachment | None) -> str:
    """A short fingerprint of what reading `attachment` in full reads: which attachment,
    and the size and modification time (ns) of its file and of its cache; "" for none.
    Two stamps differ when the file or Zotero's text of it changed (or another
    attachment is now the one read); reading nothing else, it costs two `stat`s."""
    if attachment is None:
        return ""
    parts = (attachment.key, str(attachment.path or ""), *_stat(attachment.path),
             *_stat(attachment.cache))
    return hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=8).hexdigest()


def read_body(attachment: Attachment) -> Body:
    """`attachment` read in full: its cache when usable, else its PDF parsed."""
    file = str(attachment.path) if attachment.file_here() else ""
    if attachment.cache_usable():
        with open(attachment.cache, encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_CACHE_BYTES)
        passages = split_passages(cache_blocks(text))
        return Body(passages, file if passages else "", "Zotero's full-text cache",
                    skipped="" if passages else "Zotero's full-text cache holds no text")
    assert attachment.path is not None  # chosen: a PDF here when its cache is not usable
    found = pdf_body(attachment.path)
    passages = found.passages
    reason = "" if passages else (found.body_skipped or found.skipped
                                  or "the PDF gave no body text")
    return Body(passages, file if passages else "", "the PDF", found, reason)


def pdf_body(path: Path) -> PdfExtraction:
    """The PDF at `path` read in full, by the PDF reader: the one place this reader asks
    it for a body."""
    return extract_pdf(path, full_text=True)


def cache_blocks(text: str) -> list[Block]:
    """Zotero's cached text of a document as blocks (paragraphs) on their pages under
    their headings: pages split at form feeds (none: one page, None), page numbers and
    running heads dropped, a line-end hyphen mended as the PDF reader mends it, and the
    reference list left out (up to an appendix after it)."""
    pages = text.replace("\r\n", "\n").split("\f")
    numbered = len(pages) > 1
    lines = [[line.strip() for line in page.split("\n")] for page in pages]
    running = _running_lines(lines)
    found: list[tuple[int | None, str, list[str]]] = []  # (page, section, paragraph lines)
    section, in_references = "", False
    for number, page in enumerate(lines, 1):
        paragraph: list[str] = []
        for line in _kept(page, running):
            if line and _is_heading(line):
                _close(found, number if numbered else None, section, paragraph)
                paragraph = []
                if _REFERENCES.match(line):
                    in_references = True
                elif in_references and _AFTER_REFERENCES.match(line):
                    in_references = False
                section = line
            elif not line:
                _close(found, number if numbered else None, section, paragraph)
                paragraph = []
            elif not in_references:
                paragraph.append(line)
        _close(found, number if numbered else None, section, paragraph)
    return _mended(found)


def _kept(page: list[str], running: set[str]) -> Iterable[str]:
    """The lines of `page` without page numbers and running heads or feet."""
    filled = [i for i, line in enumerate(page) if line]
    ends = {filled[0], filled[-1]} if filled else set()
    for index, line in enumerate(page):
        if line and (_PAGE_NUMBER.match(line) or
                     (index in ends and _DIGITS.sub("#", line) in running)):
            continue
        yield line


def _running_lines(pages: list[list[str]]) -> set[str]:
    """Lines (digits as #) that open or close at least half of the pages (and
    `_RUNNING_MIN_PAGES`): a running head or foot, "Journal of X, vol. #"."""
    if len(pages) < _RUNNING_MIN_PAGES:
        return set()
    seen: Counter[str] = Counter()
    for page in pages:
        filled = [line for line in page if line]
        if filled:
            seen.update({_DIGITS.sub("#", filled[0]), _DIGITS.sub("#", filled[-1])})
    floor = max(_RUNNING_MIN_PAGES, len(pages) // 2)
    return {line for line, count in seen.items() if count >= floor}


def _is_heading(line: str) -> bool:
    """A line alone that names a section: a known name ("References"), or a short
    numbered one ("4.1 Results"; a lettered one in title case, "A Proof of Lemma 2",
    so that a line of prose that opens with "A" is not one)."""
    if _NAMED.match(line):
        return True
    words = line.split()
    if len(words) > _HEADING_WORDS or not _NUMBERED.match(line) \
            or words[-1].casefold() in _CONTINUED:
        return False
    lettered = line[0].isalpha() and not words[0].rstrip(".")[1:]
    return not lettered or all(word[0].isupper() for word in words[1:] if len(word) > 3)


def _close(found: list[tuple[int | None, str, list[str]]], page: int | None, section: str,
           paragraph: list[str]) -> None:
    if paragraph:
        found.append((page, section, list(paragraph)))


def _mended(found: list[tuple[int | None, str, list[str]]]) -> list[Block]:
    """Each paragraph's lines joined into one block; a line ending in a hyphen joined
    as the document spells the word (`hyphens.mend_breaks`)."""
    joined = [(page, section, _join(lines)) for page, section, lines in found]
    spelling = Spelling.of(text for _, _, text in joined)
    return [Block(mend_breaks(text, spelling), page, "", section)
            for page, section, text in joined]


def _join(lines: list[str]) -> str:
    parts: list[str] = []
    for line in lines:
        if parts and parts[-1].endswith(BREAK):
            parts[-1] += line
        else:
            parts.append(line)
        if len(line) > 1 and line.endswith("-") and line[-2].isalpha():
            parts[-1] = parts[-1][:-1] + BREAK
    return " ".join(parts)
