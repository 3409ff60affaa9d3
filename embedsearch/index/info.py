"""Describing an index from its manifest alone: no vectors, no model, no FAISS."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..storage.directory import IndexDirectory, Manifest

__all__ = ["IndexInfo", "describe", "index_info"]


@dataclass(frozen=True)
class IndexInfo:
    """What an index holds and how it was built, read from its manifest alone."""

    path: str
    count: int
    model: str
    fingerprint: str
    encoder_backend: str
    dim: int
    index_type: str
    index_params: dict[str, Any]
    fields: tuple[str, ...]
    format_version: int
    created: str
    updated: str
    bytes: int
    #: Where the data lives: {"kind": "local"}, or a Milvus URI and collection.
    storage: dict[str, Any]
    #: What is put before queries and before papers' texts, and where that came from
    #: ({"query": "", "document": "", "source": "none"} for a model without prompts).
    prompts: dict[str, str]
    #: Segments of a local index (each searched per query; merges keep them few), and
    #: removed papers still held in them until a merge drops them (0 for Milvus).
    segments: int = 0
    deleted: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The description as JSON-ready data (the shape of `embedsearch info --json`)."""
        data = dict(self.__dict__)
        data["fields"] = list(self.fields)
        return data


def index_info(path: str | os.PathLike[str]) -> IndexInfo:
    """Describe the index at `path` without loading its vectors or its model."""
    directory = IndexDirectory(path)
    manifest = directory.read_manifest()
    directory.verify(manifest, checksums=False)
    return describe(directory, manifest)


def describe(directory: IndexDirectory, manifest: Manifest) -> IndexInfo:
    model = manifest.model
    return IndexInfo(
        path=str(directory.path),
        count=manifest.count,
        model=model.name,
        fingerprint=model.fingerprint,
        encoder_backend=model.backend,
        dim=model.dim,
        index_type=manifest.index.type,
        index_params=dict(manifest.index.params),
        fields=manifest.text.fields,
        format_version=manifest.format_version,
        created=manifest.created,
        updated=manifest.updated,
        bytes=sum(int(entry["bytes"]) for entry in manifest.files.values()),
        storage=manifest.storage.to_dict(),
        prompts=model.prompts.to_dict(),
        segments=len(manifest.local.segments),
        deleted=manifest.local.deleted,
    )
