"""The `Storage` interface: where the vectors, words and papers of an index live.

An index is a directory of manifests (see `directory`): each generation's manifest names
the model and fields it was built with and, in `manifest.storage`, where its data lives:
files beside the manifest (`local`, the default) or a Milvus collection (`milvus`). The
engine, retrieval, CLI and server read an index only through a `View` (one state, open
for reading) and change it only through its `Storage`. A storage kind is one folder beside
this module that provides a `StorageKind` (see `storage/__init__.py`).

The rules that span every storage are written once: hybrid fusion, diversity, evidence
and examples in ranking; here, the write steps (which papers are new, which ids are
missing, what a committed manifest records). A storage answers ranked lists and lookups
and applies the inserts and deletes it is handed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from .._version import __version__
from ..errors import ConfigurationError, PaperNotFoundError
from ..filters import Filters
from ..papers import DEFAULT_FIELDS, Paper, Passage, embedding_text
from ..text.words import WordStatistics
from .directory import IndexDirectory, Lease, Manifest, Staging
from .exact import Ranked
from .records import StorageRecord

__all__ = ["DEFAULT_LEXICAL_FIELDS", "IndexOptions", "PaperBatch", "PassageRanked", "Ranked",
           "Storage",
           "StorageKind", "Target", "Update", "View", "WordStatistics", "lexical_texts",
           "passage_rows", "storage_kind"]

#: Papers ranked by their best passage: (scores, paper keys, that passage's key), best
#: first, a paper once.
PassageRanked = tuple[NDArray[np.float32], NDArray[np.int64], NDArray[np.int64]]
_NO_PASSAGES: PassageRanked = (np.zeros(0, np.float32), np.zeros(0, np.int64),
                               np.zeros(0, np.int64))

#: Fields BM25 reads by default: what is embedded, plus the authors' keywords.
DEFAULT_LEXICAL_FIELDS: tuple[str, ...] = ("title", "abstract", "keywords")


def storage_kind(manifest: Manifest) -> str:
    """Where `manifest`'s data lives: 'local' unless its `storage` says otherwise."""
    return manifest.storage.kind


def lexical_texts(papers: Iterable[Paper], manifest: Manifest) -> list[str]:
    """What BM25 reads of each paper in the index of `manifest`: its lexical fields."""
    return [embedding_text(paper, manifest.text.lexical_fields) for paper in papers]


def passage_rows(papers: Sequence[Paper], rows: Sequence[int]) -> NDArray[np.intp]:
    """The rows of the passage vectors of `papers[rows]`, in order: a write's passage
    vectors are those of its papers' passages, paper after paper."""
    starts = np.cumsum([0] + [len(paper.passages) for paper in papers])
    parts = [np.arange(starts[row], starts[row + 1]) for row in rows]
    return np.concatenate(parts) if parts else np.zeros(0, np.intp)


@dataclass(frozen=True)
class PaperBatch:
    """Papers a build writes together, with their vectors (row i is paper i's, unit
    length) and their passages' (`passage_rows`; None when none was read in full). A
    build hands its storage one batch at a time, so that what it holds in memory is one
    batch's, whatever the corpus."""

    papers: Sequence[Paper]
    vectors: NDArray[np.float32]
    passage_vectors: NDArray[np.float32] | None = None


@dataclass(frozen=True)
class IndexOptions:
    """How a new index is built (`SearchEngine.build(out, papers, options)`): its vector
    index type and what text is embedded and indexed for BM25. A storage that keeps its
    own vector index (Milvus) reads `index_params` only.

    Attributes:
        index_type: `auto`, `flat`, `hnsw`, `hnsw-sq8`, `ivf`, `ivfpq` or a FAISS
            factory string. `auto` is exact search up to `exact_max` papers, then
            hnsw-sq8 (HNSW over 8-bit codes, re-ranked exactly from the vectors on
            disk), or ivfpq when that would not fit `memory_budget`.
        index_params: the index type's parameters (`{"efSearch": 128}`).
        fields: the paper fields the vectors are made from.
        exact_max: the most papers `auto` searches exactly (None: the local storage's
            own threshold, `vectors.EXACT_MAX`, 50,000).
        memory_budget: bytes the vector index may take in memory.
        lexical_fields: the paper fields BM25 indexes.

    Example:
        ```python
        from embedsearch import IndexOptions, SearchEngine

        options = IndexOptions(index_type="hnsw", fields=("title", "abstract"))
        engine = SearchEngine.build_from_files("indexes/hnsw", ["library.bib"], options)
        ```
    """

    index_type: str = "auto"
    index_params: dict[str, Any] | None = None
    fields: tuple[str, ...] = DEFAULT_FIELDS
    exact_max: int | None = None
    memory_budget: int | None = None
    lexical_fields: tuple[str, ...] = DEFAULT_LEXICAL_FIELDS


class Target(Protocol):
    """Where a new index's data is to live: `Local()` or `Milvus(uri, collection)`."""

    @property
    def kind(self) -> str: ...

    def settings(self) -> dict[str, Any]:
        """What the manifest records of it (never a secret)."""
        ...

    def secrets(self) -> dict[str, Any]:
        """What opening needs and the manifest must not hold (a token)."""
        ...


class View(ABC):
    """One state of an index, open for reading; `close` lets its files go.

    Keys are int64, unique for the life of the index (a removed paper's key is never
    reused). `exclude` keys are never returned; `filters` narrow the search itself, so
    a filtered query still gets `depth` hits whenever that many papers pass.
    """

    manifest: Manifest

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def keys(self) -> NDArray[np.int64]:
        """Every key, ascending."""

    @abstractmethod
    def keys_of(self, ids: Iterable[str]) -> dict[str, int]:
        """The key of each id the index holds; unknown ids are absent."""

    @abstractmethod
    def keys_by_title(self, titles: Iterable[str]) -> dict[str, int]:
        """The key of each normalised title (`papers.normalise_title`) the index holds;
        for a title shared by several papers, the oldest."""

    def keys_by_identifier(self, kind: str, values: Iterable[str]) -> dict[str, int]:
        """The key of each normalised DOI (`kind` "doi") or arXiv id ("arxiv_id") the
        index holds; for one shared by several papers, the oldest. A storage that does
        not index identifiers matches none (given papers then match by title)."""
        return {}

    @abstractmethod
    def papers(self, keys: Iterable[int]) -> dict[int, Paper]:
        """Papers by key, for the keys the index holds."""

    @abstractmethod
    def vectors(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        """The stored unit vectors of `keys`, in that order."""

    @abstractmethod
    def count(self, filters: Filters) -> int:
        """How many papers `filters` admits."""

    @abstractmethod
    def added(self, keys: Iterable[int]) -> dict[int, str]:
        """When the index received each of `keys` it holds: an instant (`dates`), or ''
        for a paper written before the index kept dates."""

    @abstractmethod
    def dense(self, vector: NDArray[np.float32], depth: int, filters: Filters | None,
              exclude: NDArray[np.int64]) -> Ranked:
        """The `depth` papers of highest inner product with `vector`."""

    @abstractmethod
    def lexical(self, text: str, depth: int, filters: Filters | None,
                exclude: NDArray[np.int64]) -> Ranked:
        """The `depth` papers of highest BM25 score for `text` (none scoring 0)."""

    @abstractmethod
    def lexical_scores(self, text: str, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        """The BM25 score of each of `keys` for `text` (0 where no word matches)."""

    @property
    @abstractmethod
    def words(self) -> WordStatistics:
        """The index's word statistics, for evidence."""

    # -- full text: a storage that keeps no passages has none (Milvus, for now) ------------
    @property
    def has_passages(self) -> bool:
        """Whether any paper of this generation was read in full."""
        return False

    def passage_dense(self, vector: NDArray[np.float32], depth: int, filters: Filters | None,
                      exclude: NDArray[np.int64]) -> PassageRanked:
        """The `depth` papers whose best passage is nearest `vector`, with that passage."""
        return _NO_PASSAGES

    def passage_lexical(self, text: str, depth: int, filters: Filters | None,
                        exclude: NDArray[np.int64]) -> PassageRanked:
        """The `depth` papers whose best passage scores highest by BM25 for `text` (the
        statistics those of abstracts and passages together), with that passage."""
        return _NO_PASSAGES

    def passages(self, keys: Iterable[int]) -> dict[int, Passage]:
        """The passages of passage `keys` (those held)."""
        return {}

    def paper_passages(self, key: int) -> list[Passage]:
        """Every passage of the paper `key`, in order; [] for a paper not read in full."""
        return []

    def files(self, keys: Iterable[int]) -> dict[int, str]:
        """The file each of `keys` was read in full from (those that were)."""
        return {}

    @abstractmethod
    def check(self) -> list[str]:
        """What is wrong with this generation's data beyond its files' checksums (which
        `directory` checks): its parts disagree on which papers it holds, or with the
        manifest's count; a damaged database. One line a problem; [] when whole."""

    @abstractmethod
    def close(self) -> None: ...


class Storage(ABC):
    """Where one index's data lives: opens views of a generation and applies writes.

    `LiveIndex` holds the writers' lock and reads the newest manifest before calling
    `add` or `remove`; a write returns the manifest it published, and only the live
    index opens views (of what it serves). The steps every storage shares
    are written here once: `add` keeps only papers the index lacks, `remove` refuses an
    id it does not hold, `commit` records the software; a storage provides the hooks
    `keys_of`, `insert` and `delete`.
    """

    kind: ClassVar[str]

    def __init__(self, directory: IndexDirectory, where: StorageRecord | None = None,
                 secrets: Mapping[str, Any] | None = None) -> None:
        self.directory = directory
        #: Where the data lives, as the manifest records it (`manifest.storage`).
        self.where = where or StorageRecord(self.kind)
        #: What opening needs beyond the manifest and must never be written to disk
        #: (a server's token, say).
        self.secrets = dict(secrets or {})

    def check_build(self, options: IndexOptions, count: int, dim: int, *,
                    overwrite: bool) -> None:
        """Refuse a build that would fail, before encoding (which can take hours)."""

    @abstractmethod
    def build(self, staging: Staging, batches: Iterable[PaperBatch], manifest: Manifest,
              options: IndexOptions, *, progress: bool = False) -> Manifest:
        """Write the papers of `batches` as the new index `staging`, where `where` says:
        `manifest` holds the model and text; the storage fills in its count, `index` and
        `storage` records (and its own) and commits it. The batches are made (encoded)
        as they are asked for, so a storage writes each before asking for the next.
        `progress`: a bar on stderr for what takes long (sending rows to a server). A
        storage that keeps no full text passes over the batches' passage vectors, and
        every write takes them alike."""

    @abstractmethod
    def view(self, manifest: Manifest, lease: Lease, *, checksums: bool) -> View:
        """`manifest`'s generation open for reading (its files checked: sha256 if
        `checksums`, else sizes), holding `lease` until the view is closed."""

    def add(self, staging: Staging, newest: Manifest, papers: Sequence[Paper],
            vectors: NDArray[np.float32], passage_vectors: NDArray[np.float32] | None = None
            ) -> Manifest | None:
        """Add the papers whose ids `newest` lacks (row i of `vectors` is paper i's) as
        the generation `staging`; its committed manifest, or None if every paper was
        there already."""
        known = self.keys_of(newest, [paper.id for paper in papers])
        fresh = [row for row, paper in enumerate(papers) if paper.id not in known]
        if not fresh:
            return None
        chosen = None if passage_vectors is None else passage_vectors[passage_rows(papers, fresh)]
        return self.insert(staging, newest, [papers[row] for row in fresh], vectors[fresh],
                           chosen)

    def remove(self, staging: Staging, newest: Manifest,
               paper_ids: Sequence[str]) -> Manifest:
        """Remove `paper_ids` (PaperNotFoundError, nothing changed, if one is missing) as
        the generation `staging`; its committed manifest."""
        found = self.keys_of(newest, paper_ids)
        for paper_id in paper_ids:
            if paper_id not in found:  # removed by another process meanwhile
                raise PaperNotFoundError(paper_id, self.directory.path)
        keys = np.array(sorted(set(found.values())), dtype=np.int64)
        return self.delete(staging, newest, keys)

    def commit(self, staging: Staging, manifest: Manifest) -> Manifest:
        """Publish `staging` with `manifest`, which records the software that wrote it."""
        manifest.software = f"embedsearch {__version__}"
        return self.directory.commit(staging, manifest)

    @abstractmethod
    def keys_of(self, manifest: Manifest, paper_ids: Sequence[str]) -> dict[str, int]:
        """The key of each of `paper_ids` that `manifest`'s generation holds."""

    @abstractmethod
    def insert(self, staging: Staging, newest: Manifest, papers: Sequence[Paper],
               vectors: NDArray[np.float32],
               passage_vectors: NDArray[np.float32] | None = None) -> Manifest:
        """Add `papers`, all new, to `newest`'s data as the generation `staging`; commit
        it (`commit`) and return its manifest."""

    @abstractmethod
    def delete(self, staging: Staging, newest: Manifest,
               keys: NDArray[np.int64]) -> Manifest:
        """Remove `keys`, all held, from `newest`'s data as the generation `staging`;
        commit it and return its manifest."""

    @abstractmethod
    def replace(self, staging: Staging, newest: Manifest, keys: NDArray[np.int64],
                papers: Sequence[Paper], vectors: NDArray[np.float32],
                passage_vectors: NDArray[np.float32] | None = None) -> Manifest:
        """Remove `keys` (all held) and add `papers` (ids new once `keys` are gone; row
        i of `vectors` is paper i's) as the one generation `staging`; commit it and
        return its manifest. How a sync changes papers in place."""

    def compact(self, staging: Staging, newest: Manifest) -> Manifest | None:
        """Rewrite `newest`'s data in its most compact form as the generation `staging`
        (local files: one segment, removed papers dropped); its manifest, or None when
        there is nothing to do. By default nothing: the storage compacts itself."""
        return None

    def replace_vectors(self, staging: Staging, newest: Manifest, keys: NDArray[np.int64],
                        vectors: NDArray[np.float32]) -> Manifest:
        """Store `vectors` (row i for key i) in place of the vectors of `keys`, all held,
        as the generation `staging` (a repair: the papers and their keys stay)."""
        raise ConfigurationError(f"re-encoding vectors in place is not available for "
                                 f"{self.kind} storage: rebuild the index", parameter="repair")

    def upgrade(self, staging: Staging, previous: Manifest, changes: list[str]) -> list[str]:
        """Write `previous` (read migrated, see `manifest`) as the generation `staging`
        in this version's format, adding what its data lacks; what was upgraded
        (`changes`, the manifest's, and the data's), or [] and nothing committed when
        it is up to date. By default the data is kept as it is."""
        if changes:
            self.directory.link_files(previous, staging, sorted(previous.files))
            self.commit(staging, previous)
        return changes

    def close(self) -> None:
        """Let go of connections (a Milvus client); views already open stay usable."""


@dataclass(frozen=True)
class StorageKind:
    """What a storage folder provides as its `STORAGE`: the storage class, and how a
    `--storage KIND:LOCATION` with `--storage-option KEY=VALUE`s becomes its target.
    `target(location, options, index_name)`: `index_name` is the index folder's name,
    for a storage that names things after it (a Milvus collection); an unknown option
    raises ConfigurationError naming the known ones."""

    storage: type[Storage]
    target: Callable[[str, Mapping[str, str], str], Target]


#: A write: given the storage, the staged generation and the newest manifest, the
#: published manifest, or None if there was nothing to write.
Update = Callable[[Storage, Staging, Manifest], "Manifest | None"]
