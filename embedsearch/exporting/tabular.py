"""Hits or papers as tables: CSV (a spreadsheet's) and JSON lines (the `--json` shape),
a row per hit, so that a batch's or a recommendation's extra columns travel too."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..papers import Paper
from ..search.results import HIT_COLUMNS, Hit, hit_record

__all__ = ["EXTRA_COLUMNS", "to_csv", "to_jsonl"]

#: Columns a batch or similar-paper result adds after the hit's own.
EXTRA_COLUMNS = ("query_index", "query", "query_id")
_PAPER_COLUMNS = tuple(column for column in HIT_COLUMNS if column in Paper.__dataclass_fields__)


def _cell(value: Any) -> Any:
    if isinstance(value, Mapping):  # bib_fields: "publisher: MIT Press; pages: 1--9"
        return "; ".join(f"{name}: {text}" for name, text in value.items())
    if isinstance(value, (list, tuple)):
        return "; ".join(_named(item) for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def _named(item: Any) -> str:
    """A list's item in a CSV cell: a reason (an example paper) by its title and id."""
    if isinstance(item, Mapping) and "id" in item:
        return f"{item.get('title') or ''} ({item['id']})".strip()
    return str(item)


def _records(items: Iterable[Hit | Paper | Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [hit_record(item) if isinstance(item, Hit) else
            item.to_dict() if isinstance(item, Paper) else dict(item) for item in items]


def to_csv(items: Iterable[Hit | Paper | Mapping[str, Any]], *, header: bool = True) -> str:
    """CSV text with a header: the JSON hit's fields (`HIT_COLUMNS`, then query_index,
    query or query_id where present), lists joined with "; ". Papers give the paper
    columns only. `items` may also be JSON hit records (`hit_record`)."""
    records = _records(items)
    base = (HIT_COLUMNS if not records or any("rank" in record for record in records)
            else _PAPER_COLUMNS)
    columns = [*base, *(c for c in EXTRA_COLUMNS if any(c in record for record in records))]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(columns)
    for record in records:
        writer.writerow([_cell(record.get(column)) for column in columns])
    return buffer.getvalue()


def to_jsonl(items: Iterable[Hit | Paper | Mapping[str, Any]]) -> str:
    """One JSON object per line: the `--json` shape of each hit (or paper)."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in _records(items))
