"""The records a manifest is made of, each a frozen value with the JSON it is written as.

    ModelRecord        the encoder that made the vectors (a query encoder must match it)
    TextRecord         which fields are embedded, and which BM25 reads
    VectorIndexRecord  how vectors are indexed (one segment's, or the index's largest)
    StorageRecord      where the data lives: the kind, and that kind's own settings
    LocalRecord        the local storage's own record: its segments (SegmentRecord),
                       the key the next paper gets, when each write added papers, and the
                       rules new segments' indexes follow (IndexRules)

Each record reads and writes exactly the JSON entries the format has always had (see
`manifest`): `from_dict` takes what `to_dict` writes. Only `storage/local/` reads or
writes a `LocalRecord`, and only a storage kind reads its `StorageRecord.settings`
(tests/test_architecture.py holds both). The local record lives here rather than in
`storage/local/` so that reading a manifest (`embedsearch info`) imports no FAISS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["VECTOR_INDEX_ENTRIES", "Addition", "FullTextRecord", "IndexRules", "LocalRecord",
           "ModelRecord", "PromptsRecord", "SegmentRecord", "StorageRecord", "TextRecord",
           "VectorIndexRecord"]

#: A write that added papers: its first key and its instant (see `local.additions`).
Addition = tuple[int, str]


@dataclass(frozen=True)
class PromptsRecord:
    """The prefixes put before queries and documents, and where they came from."""

    query: str = ""
    document: str = ""
    source: str = "none"

    def to_dict(self) -> dict[str, str]:
        return {"query": self.query, "document": self.document, "source": self.source}


@dataclass(frozen=True)
class ModelRecord:
    """The encoder that made an index's vectors."""

    name: str
    fingerprint: str
    backend: str
    dim: int
    max_seq_length: int
    prompts: PromptsRecord = PromptsRecord()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "fingerprint": self.fingerprint, "backend": self.backend,
                "dim": self.dim, "max_seq_length": self.max_seq_length,
                "prompts": self.prompts.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelRecord:
        # An index written before prompts were kept has none (`migrate` fills them in).
        prompts = data.get("prompts") or {}
        return cls(str(data["name"]), str(data["fingerprint"]), str(data["backend"]),
                   int(data["dim"]), int(data["max_seq_length"]),
                   PromptsRecord(**prompts))


@dataclass(frozen=True)
class TextRecord:
    """What of a paper is embedded (`fields`) and what BM25 reads (`lexical_fields`)."""

    fields: tuple[str, ...]
    lexical_fields: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"fields": list(self.fields), "lexical_fields": list(self.lexical_fields)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextRecord:
        return cls(tuple(data["fields"]), tuple(data["lexical_fields"]))


@dataclass(frozen=True)
class VectorIndexRecord:
    """How vectors are indexed: the implementation (faiss, milvus), the index type and
    its parameters; `lexical` names the ranking of words where the storage does it
    itself (Milvus: BM25), None where embedsearch does."""

    implementation: str = ""
    type: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    lexical: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {"implementation": self.implementation, "type": self.type,
                 "params": dict(self.params)}
        return found if self.lexical is None else {**found, "lexical": self.lexical}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VectorIndexRecord:
        return cls(str(data["implementation"]), str(data["type"]), dict(data["params"]),
                   data.get("lexical"))


#: The entries of a manifest's "index" that `VectorIndexRecord` holds; the rest are the
#: local storage's rules (`IndexRules`).
VECTOR_INDEX_ENTRIES = ("implementation", "type", "params", "lexical")


@dataclass(frozen=True)
class StorageRecord:
    """Where an index's data lives: its `kind` and what that kind needs to find it
    (Milvus: its URI and collection; never a secret). Written as {"kind": ..., **settings}."""

    kind: str = "local"
    settings: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.settings}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StorageRecord:
        settings = {key: value for key, value in data.items() if key != "kind"}
        return cls(str(data.get("kind", "local")), settings)


@dataclass(frozen=True)
class FullTextRecord:
    """The full text of a segment's papers: how many passages it holds (removed papers'
    included, as their deletions are the segment's) and their vector index."""

    count: int
    index: VectorIndexRecord

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count, "index": self.index.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FullTextRecord:
        return cls(int(data["count"]), VectorIndexRecord.from_dict(data["index"]))


@dataclass(frozen=True)
class SegmentRecord:
    """One segment of a local generation: its folder's name, the papers written to it,
    those removed since, its vector index, and its papers' full text when any has one
    (None: a segment of abstracts, recorded as before full text existed)."""

    name: str
    count: int
    deleted: int
    index: VectorIndexRecord
    full_text: FullTextRecord | None = None

    @property
    def live(self) -> int:
        """How many of its papers are not deleted."""
        return self.count - self.deleted

    def to_dict(self) -> dict[str, Any]:
        data = {"name": self.name, "count": self.count, "deleted": self.deleted,
                "index": self.index.to_dict()}
        if self.full_text is not None:
            data["full_text"] = self.full_text.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SegmentRecord:
        full_text = data.get("full_text")
        return cls(str(data["name"]), int(data["count"]), int(data.get("deleted", 0)),
                   VectorIndexRecord.from_dict(data["index"]),
                   FullTextRecord.from_dict(full_text) if full_text is not None else None)


@dataclass(frozen=True)
class IndexRules:
    """The rules a new segment's vector index follows: the type asked for (`requested`:
    "auto" or a type), its parameters (`overrides`, for that type only), and what `auto`
    reads (`exact_max`, `memory_budget`). Written among the manifest's "index" entries."""

    auto: bool
    requested: str
    overrides: Mapping[str, Any]
    exact_max: int | None
    memory_budget: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"auto": self.auto, "requested": self.requested,
                "overrides": dict(self.overrides), "exact_max": self.exact_max,
                "memory_budget": self.memory_budget}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], index: VectorIndexRecord) -> IndexRules:
        """The rules in `data`; a flat index of format 2 has none but `auto`, read as it
        was built: `auto`, or its type with its parameters (the factory string aside)."""
        auto = bool(data["auto"])
        built = {k: v for k, v in index.params.items() if k != "factory"}
        return cls(auto, str(data.get("requested", "auto" if auto else index.type)),
                   dict(data.get("overrides", {} if auto else built)),
                   data.get("exact_max"), data.get("memory_budget"))


@dataclass(frozen=True)
class LocalRecord:
    """The local storage's own record: the segments of a generation, oldest first (see
    `local.segment`; their files are listed in the manifest's files under "NAME/FILE"),
    the key the next added paper gets (keys are never reused), when papers arrived
    ([first key, instant] for each write that added some, see `local.additions`), and
    the rules of new segments' indexes (None for an index of another kind)."""

    segments: tuple[SegmentRecord, ...] = ()
    next_key: int = 1
    additions: tuple[Addition, ...] = ()
    rules: IndexRules | None = None

    @property
    def deleted(self) -> int:
        """Removed papers its segments still hold (until a merge drops them)."""
        return sum(segment.deleted for segment in self.segments)

    def entries(self) -> dict[str, Any]:
        """Its top-level entries of the manifest. Every format-3 manifest has them,
        empty for a storage of another kind."""
        return {"segments": [segment.to_dict() for segment in self.segments],
                "next_key": self.next_key,
                "additions": [[key, when] for key, when in self.additions]}

    def index_entries(self) -> dict[str, Any]:
        """Its entries among the manifest's "index" ones: the rules."""
        return {} if self.rules is None else self.rules.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], index: Mapping[str, Any],
                  vector_index: VectorIndexRecord) -> LocalRecord:
        """The record in a manifest's entries `data`, with `index` its "index" entries
        beyond `vector_index` (none for a storage of another kind)."""
        rules = IndexRules.from_dict(index, vector_index) if index else None
        return cls(tuple(SegmentRecord.from_dict(s) for s in data.get("segments", [])),
                   int(data.get("next_key", 1)),
                   tuple((int(key), str(when)) for key, when in data.get("additions", [])),
                   rules)
