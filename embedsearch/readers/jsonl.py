"""JSON Lines: one JSON object per line, each a paper record (see `records`).

The first record decides the dialect of the whole file: ours, or a foreign one it is
recognised as (`foreign.sniff_dialect`: the arXiv metadata dump, OpenAlex works, CSL items).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..papers import derive_id
from .base import Located, Skipped, iter_lines, load_json, register_format, source_name
from .foreign import Converted, Dialect, foreign_papers, sniff_dialect
from .records import Where, kind, paper_from_record

__all__ = ["json_objects", "read_json_lines", "read_jsonl"]


def json_objects(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    """(line, object) for each non-blank line, one line in memory at a time."""
    for line, text in iter_lines(path):
        if not text.strip():
            continue
        raw = load_json(text, path, line)
        if not isinstance(raw, dict):
            raise InputError(f"expected a JSON object, got {kind(raw)}", path=path, line=line)
        yield line, raw


def _ours(path: Path, objects: Iterator[tuple[int, dict[str, object]]]) -> Iterator[Located]:
    stem = source_name(path)
    for position, (line, raw) in enumerate(objects, 1):
        # A record with a title and no abstract is a title-only paper, kept or reported
        # as the caller's --allow-title-only says (as a BibTeX entry's is).
        paper = paper_from_record(raw, default_id=derive_id(stem, position), path=path, line=line,
                                  title_only=True)
        yield paper, f"{path}:{line}"


def _converted(path: Path, dialect: Dialect,
               objects: Iterator[tuple[int, dict[str, object]]]) -> Iterator[Converted]:
    for line, raw in objects:
        where = Where(path, line, None)
        record = dialect.convert(raw, where)
        name = record.get("id")
        yield record, where, f"{name} (line {line})" if name else f"line {line}"


def read_json_lines(path: Path, dialect: Dialect | None = None) -> Iterator[Located | Skipped]:
    """Papers of a JSON Lines file in `dialect`, or in the dialect its first record shows."""
    objects = json_objects(path)
    first = next(objects, None)
    if first is None:
        return
    chosen = dialect or sniff_dialect(first[1])
    objects = itertools.chain([first], objects)
    if chosen is None:
        yield from _ours(path, objects)
    else:
        yield from foreign_papers(path, _converted(path, chosen, objects))


@register_format("jsonl", (".jsonl", ".ndjson"), "one JSON object per line")
def read_jsonl(path: Path) -> Iterator[Located | Skipped]:
    return read_json_lines(path)
