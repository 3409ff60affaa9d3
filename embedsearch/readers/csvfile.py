"""CSV (or TSV) with a header row naming the record fields (see `records`): an
`abstract` column, or a `title` column for papers known by their titles only.

Lists (authors, keywords) are ';'-separated inside their cell; an empty cell is a
missing value.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..papers import derive_id
from .base import Located, iter_lines, register_format, source_name
from .records import paper_from_record

__all__ = ["read_csv"]


def _rows(path: Path, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """(line where the row starts, cells); an unclosed quote names its opening line."""
    lines = (text for _, text in iter_lines(path))
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            reason = str(exc)
            if "unexpected end of data" in reason or "EOF" in reason:
                reason = "a quoted cell is never closed (unmatched '\"')"
            elif "field larger than field limit" in reason:
                reason = (f"a cell runs past {csv.field_size_limit():,} characters, longer "
                          "than any abstract: most likely a quote is never closed")
            raise InputError(f"malformed CSV: {reason}", path=path, line=start) from None
        yield start, row


def _read(path: Path, delimiter: str) -> Iterator[Located]:
    rows = _rows(path, delimiter)
    header_row = next(rows, None)
    if header_row is None:
        raise InputError("no header row", path=path, line=1)
    header = [name.strip().lower() for name in header_row[1]]
    if "abstract" not in header and "title" not in header:
        raise InputError(f"the header row has no 'abstract' column (it has: "
                         f"{', '.join(header)}); name the abstracts' column 'abstract', or the "
                         "titles' 'title' to index the papers on their titles with "
                         "--allow-title-only", path=path, line=header_row[0])
    stem = source_name(path)
    position = 0
    for line, cells in rows:
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise InputError(f"expected {len(header)} cells as in the header, found {len(cells)}",
                             path=path, line=line)
        position += 1
        raw = {name: (cell if cell.strip() else None) for name, cell in zip(header, cells)}
        # A row with a title and no abstract (or no abstract column) is a title-only
        # paper, kept or reported as the caller's --allow-title-only says.
        paper = paper_from_record(raw, default_id=derive_id(stem, position), path=path, line=line,
                                  title_only=True)
        yield paper, f"{path}:{line}"


@register_format("csv", (".csv",), "comma-separated, with a header row")
def read_csv(path: Path) -> Iterator[Located]:
    return _read(path, ",")


@register_format("tsv", (".tsv",), "tab-separated, with a header row")
def read_tsv(path: Path) -> Iterator[Located]:
    return _read(path, "\t")
