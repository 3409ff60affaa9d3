"""JSON Lines: one JSON object per line, each a paper record (see `records`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..papers import derive_id
from .base import Located, iter_lines, register_format, source_name
from .records import paper_from_record

__all__ = ["read_jsonl"]


@register_format("jsonl", (".jsonl", ".ndjson"), "one JSON object per line")
def read_jsonl(path: Path) -> Iterator[Located]:
    stem = source_name(path)
    position = 0
    for line, text in iter_lines(path):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON ({exc.msg} at column {exc.colno})",
                             path=path, line=line) from None
        if not isinstance(raw, dict):
            raise InputError(f"expected a JSON object, got {type(raw).__name__}",
                             path=path, line=line)
        position += 1
        paper = paper_from_record(raw, default_id=derive_id(stem, position), path=path, line=line)
        yield paper, f"{path}:{line}"
