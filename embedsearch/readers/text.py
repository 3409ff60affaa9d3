"""Plain text in the seed layout: an optional header line, then one abstract per paragraph.

Paragraphs are separated by blank lines; a paragraph's lines are joined with spaces.
The first paragraph is taken as a header when it is a single short line that does not
end like a sentence (the seeds start with "ICLR 2025 论文列表"). A header that names a
venue and a year ("ICLR 2025 ...") gives them to every paper of the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ..papers import Paper, derive_id, derive_title
from .base import Located, iter_lines, register_format, source_name

__all__ = ["read_text_file"]

_HEADER_MAX_CHARS = 100
_VENUE_YEAR = re.compile(r"^\s*([A-Z][A-Za-z]{1,15})\s*'?((?:19|20)\d\d)\b")


def _paragraphs(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) of each blank-line-separated paragraph."""
    start, lines = 0, list[str]()
    for number, line in iter_lines(path):
        if line.strip():
            if not lines:
                start = number
            lines.append(line.strip())
        elif lines:
            yield start, lines
            lines = []
    if lines:
        yield start, lines


def _is_header(lines: list[str]) -> bool:
    text = lines[0]
    return len(lines) == 1 and len(text) <= _HEADER_MAX_CHARS and text[-1] not in ".!?"


@register_format("text", (".txt", ".text"), "abstracts separated by blank lines")
def read_text_file(path: Path) -> Iterator[Located]:
    stem = source_name(path)
    venue, year = "", None
    position = 0
    for index, (line, lines) in enumerate(_paragraphs(path)):
        if index == 0 and _is_header(lines):
            match = _VENUE_YEAR.match(lines[0])
            if match:
                venue, year = match.group(1), int(match.group(2))
            continue
        position += 1
        abstract = " ".join(lines)
        paper = Paper(
            id=derive_id(stem, position),
            abstract=abstract,
            title=derive_title(abstract),
            title_derived=True,
            venue=venue,
            year=year,
        )
        yield paper, f"{path}:{line}"
