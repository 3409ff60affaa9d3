"""A JSON document holding an array of paper records (see `records`).

As with JSON Lines, the first object of the array may show a foreign dialect (CSL-JSON
as Zotero exports it, OpenAlex works); an object with a `results` array is an OpenAlex
API response.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..papers import derive_id
from .base import Located, Skipped, iter_lines, load_json, read_text, register_format, source_name
from .foreign import Converted, Dialect, dialect_named, foreign_papers, sniff_dialect
from .jsonl import read_json_lines
from .records import Where, kind, paper_from_record

__all__ = ["json_lines_named_json", "json_records", "read_json_array", "read_json_document"]

_JSONL_HINT = "; it looks like JSON Lines: rename it .jsonl or pass --format jsonl"


def json_records(path: Path) -> tuple[list[object], Dialect | None]:
    """The records of the document and the dialect its container shows, if any."""
    document = load_json(read_text(path), path, extra_data_hint=_JSONL_HINT)
    if isinstance(document, dict) and isinstance(document.get("results"), list):
        return document["results"], dialect_named("openalex")
    if not isinstance(document, list):
        raise InputError(f"expected a JSON array of records, got {kind(document)}", path=path)
    return document, None


def _objects(path: Path, records: list[object]) -> Iterator[tuple[int, dict[str, object]]]:
    for position, raw in enumerate(records, 1):
        if not isinstance(raw, dict):
            raise InputError(f"expected a JSON object, got {kind(raw)}",
                             path=path, record=position)
        yield position, raw


def _converted(path: Path, dialect: Dialect, records: list[object]) -> Iterator[Converted]:
    for position, raw in _objects(path, records):
        where = Where(path, None, position)
        record = dialect.convert(raw, where)
        name = record.get("id")
        yield record, where, f"{name} (record {position})" if name else f"record {position}"


def read_json_document(path: Path, dialect: Dialect | None = None) -> Iterator[Located | Skipped]:
    """Papers of a JSON document in `dialect`, or in the one its container or records show."""
    records, shown = json_records(path)
    first = next((raw for raw in records if isinstance(raw, dict)), None)
    chosen = dialect or shown or (sniff_dialect(first) if first is not None else None)
    if chosen is not None:
        yield from foreign_papers(path, _converted(path, chosen, records))
        return
    stem = source_name(path)
    for position, raw in _objects(path, records):
        paper = paper_from_record(raw, default_id=derive_id(stem, position), path=path,
                                  record=position, title_only=True)  # as jsonl's
        yield paper, f"{path}: record {position}"


def json_lines_named_json(path: Path) -> bool:
    """Whether a `.json` file is JSON Lines, as arXiv's dump (`arxiv-metadata-oai-
    snapshot.json`, about 4 GB) is: its first line one whole object, another line after
    it. Found from those two lines, so the dump is then read a line at a time instead of
    whole (it does not fit a laptop's memory)."""
    lines = (text for _, text in iter_lines(path) if text.strip())
    first = next(lines, None)
    if first is None or not first.lstrip().startswith("{"):
        return False
    try:
        parsed = json.loads(first)
    except (ValueError, RecursionError):  # the document's own reading says what is wrong
        return False
    return isinstance(parsed, dict) and next(lines, None) is not None


@register_format("json", (".json",), "a JSON array of records (JSON Lines named .json too)")
def read_json_array(path: Path) -> Iterator[Located | Skipped]:
    if json_lines_named_json(path):
        yield from read_json_lines(path)
    else:
        yield from read_json_document(path)
