"""The manifest: what an index is (model, text, index, files with checksums), its format
version, and how a manifest written by an earlier embedsearch is brought up to date.

Format versions this code has written:

    1   no lexical index; the text record has no lexical_fields
    2   a lexical index (lexical.npz) in every generation; later, without a version
        change, the manifest gained `storage` and the model record `prompts`, and the
        paper store the doi and arxiv_id columns (each read as absent when missing)
    3   segments: a local generation lists immutable segments (`segments`), each a
        folder of its own papers.sqlite, vectors, lexical.npz and deletions; keys are
        handed out from `next_key`. Milvus indexes list none. The vector index's entry
        names its `implementation` (format 2: `backend`). Later, without a version
        change, a local manifest gained `additions` (when each write added its papers;
        read as none when absent: such papers have no date).

A version-3 manifest opens as it is. An earlier one is refused with the command that
upgrades it (`embedsearch upgrade`, see `upgrade`); one newer than this code is refused
with the version of embedsearch that wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import IndexCorruptError, IndexIncompatibleError
from .records import (
    VECTOR_INDEX_ENTRIES,
    LocalRecord,
    ModelRecord,
    StorageRecord,
    TextRecord,
    VectorIndexRecord,
)

__all__ = ["FORMAT", "FORMAT_VERSION", "MANIFEST", "Manifest", "migrate", "missing_records"]

FORMAT = "embedsearch-index"
FORMAT_VERSION = 3
MANIFEST = "manifest.json"
#: What BM25 read before indexes recorded it (format 1 had no lexical index; format 2's
#: first indexes read these fields).
_FIRST_LEXICAL_FIELDS = ["title", "abstract", "keywords"]


@dataclass
class Manifest:
    """Everything needed to check and load an index; written last, read first. Its
    records are frozen (see `records`); a write makes a new manifest with new ones."""

    model: ModelRecord
    text: TextRecord
    count: int
    #: The vector index: for a local index, its largest segment's (see `local`).
    index: VectorIndexRecord = field(default_factory=VectorIndexRecord)
    metric: str = "inner_product"
    generation: int = 1
    created: str = ""
    updated: str = ""
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Where the data lives: files beside this manifest (the default), or a Milvus URI
    #: and collection. Never a secret.
    storage: StorageRecord = field(default_factory=StorageRecord)
    #: The local storage's own record (its segments, next key, additions, rules); read
    #: and written only by `storage/local/`, empty for another kind.
    local: LocalRecord = field(default_factory=LocalRecord)
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    software: str = ""

    def to_json(self) -> str:
        data = {"model": self.model.to_dict(), "text": self.text.to_dict(),
                "index": {**self.index.to_dict(), **self.local.index_entries()},
                "count": self.count, "metric": self.metric, "generation": self.generation,
                "created": self.created, "updated": self.updated, "files": self.files,
                "storage": self.storage.to_dict(), **self.local.entries(),
                "format": self.format, "format_version": self.format_version,
                "software": self.software}
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, where: Path, *, upgrading: bool = False) -> Manifest:
        """The manifest in `text` (read from `where`). An earlier format is refused with
        the command that upgrades it, unless `upgrading`: then it is migrated in memory
        (`migrate`), for `upgrade` to write its files anew."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise IndexCorruptError(f"{where}: manifest is not valid JSON ({exc.msg}, "
                                    f"line {exc.lineno}); rebuild the index") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise IndexIncompatibleError(f"{where}: not an embedsearch index manifest")
        _check_version(data, where, upgrading=upgrading)
        if upgrading:
            data = migrate(data)
        try:
            return cls._from_data(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise IndexCorruptError(f"{where}: manifest has missing or unexpected fields "
                                    f"({type(exc).__name__}: {exc}); rebuild the index") from None

    @classmethod
    def _from_data(cls, data: dict[str, Any]) -> Manifest:
        records = {name: data.pop(name) for name in _RECORDS if name in data}
        index = dict(records.get("index", {}))
        vector_index = VectorIndexRecord.from_dict(index)
        rules = {k: v for k, v in index.items() if k not in VECTOR_INDEX_ENTRIES}
        return cls(model=ModelRecord.from_dict(records["model"]),
                   text=TextRecord.from_dict(records["text"]), index=vector_index,
                   storage=StorageRecord.from_dict(records.get("storage") or {}),
                   local=LocalRecord.from_dict(records, rules, vector_index), **data)


#: The entries of a manifest's JSON that records hold (the rest are plain fields).
_RECORDS = ("model", "text", "index", "storage", "segments", "next_key", "additions")


def _check_version(data: dict[str, Any], where: Path, *, upgrading: bool) -> None:
    version = data.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise IndexCorruptError(f"{where}: format_version {version!r} is not a version")
    if version > FORMAT_VERSION:
        wrote = data.get("software") or "a newer embedsearch"
        raise IndexIncompatibleError(
            f"{where}: index format version {version} was written by {wrote}; this "
            f"embedsearch reads up to version {FORMAT_VERSION}: install {wrote} or newer "
            f"(pip install -U embedsearch) to open it")
    if version < FORMAT_VERSION and not upgrading:
        raise IndexIncompatibleError(
            f"{where}: index format version {version} was written by an earlier "
            f"embedsearch; this one reads version {FORMAT_VERSION}: upgrade it in place "
            f"with `embedsearch upgrade --index {where.parent}` (the old generation is "
            "kept until the new one is published)")


def _from_1(data: dict[str, Any]) -> dict[str, Any]:
    """1 -> 2: a lexical index over `lexical_fields` (its file is written by `upgrade`)."""
    return {**data, "text": {**data["text"], "lexical_fields": list(_FIRST_LEXICAL_FIELDS)},
            "format_version": 2}


def _from_2(data: dict[str, Any]) -> dict[str, Any]:
    """2 -> 3: segments. The manifest lists none yet: `upgrade` makes the generation's
    files (one flat set) its first segment, without rewriting them. The vector index's
    "backend" is named its "implementation" (backend names the encoder's runtime)."""
    index = {("implementation" if key == "backend" else key): value
             for key, value in data["index"].items()}
    return {**data, "index": index, "segments": [], "next_key": 1, "format_version": 3}


#: Each earlier format version's step to the next; `upgrade` writes the files a step
#: adds (see `missing_records` for what version 2 gained without a version change).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _from_1, 2: _from_2}


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """A manifest's data brought to FORMAT_VERSION, with every record it lacks filled in
    as the code reads it when absent."""
    while data["format_version"] < FORMAT_VERSION:
        data = MIGRATIONS[data["format_version"]](data)
    data = {**data, "storage": data.get("storage") or {"kind": "local"}}
    model = data["model"]
    if "prompts" not in model:
        data["model"] = {**model, "prompts": {"query": "", "document": "", "source": "none"}}
    return data


def missing_records(text: str) -> list[str]:
    """What an upgrade would add to the manifest in `text`: an earlier format, or
    records that version 2 gained later (read as absent until then)."""
    data = json.loads(text)
    found = []
    if data.get("format_version", FORMAT_VERSION) < FORMAT_VERSION:
        found.append(f"format version {data['format_version']} (now {FORMAT_VERSION})")
    if "storage" not in data:
        found.append("where the data lives (storage)")
    if "prompts" not in data.get("model", {}):
        found.append("the model's prompts")
    return found
