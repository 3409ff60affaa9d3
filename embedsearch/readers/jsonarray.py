"""A JSON document holding an array of paper records (see `records`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..papers import derive_id
from .base import Located, read_text, register_format, source_name
from .records import paper_from_record

__all__ = ["read_json_array"]


def _load(path: Path) -> object:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.msg == "Extra data":
            hint = "; it looks like JSON Lines: rename it .jsonl or pass --format jsonl"
        raise InputError(f"malformed JSON ({exc.msg} at column {exc.colno}){hint}",
                         path=path, line=exc.lineno) from None


@register_format("json", (".json",), "a JSON array of records")
def read_json_array(path: Path) -> Iterator[Located]:
    document = _load(path)
    if not isinstance(document, list):
        raise InputError(f"expected a JSON array of records, got {type(document).__name__}",
                         path=path)
    stem = source_name(path)
    for position, raw in enumerate(document, 1):
        if not isinstance(raw, dict):
            raise InputError(f"expected a JSON object, got {type(raw).__name__}",
                             path=path, record=position)
        paper = paper_from_record(raw, default_id=derive_id(stem, position), path=path,
                                  record=position)
        yield paper, f"{path}: record {position}"
