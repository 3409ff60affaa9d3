"""Writing an index: build it from papers, add papers, remove papers.

Each write encodes what it must before touching the disk, then, holding the writers'
lock, stages a complete new generation through `layout` from the newest one on disk and
publishes it in one rename, so a failure at any point leaves the previous index as it
was, and a change another process published meanwhile is never lost.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._version import __version__
from .encoding import Encoder, Executor
from .errors import IndexIncompatibleError, IndexNotFoundError, InputError, PaperNotFoundError
from .layout import DEFAULT_WAIT, IndexDirectory, Manifest, Staging
from .lexical import LexicalIndex
from .papers import DEFAULT_FIELDS, TEXT_FIELDS, Paper, embedding_text
from .projection import MAP_FILE, CorpusMap, save_map
from .store import STORE_FILE, PaperStore
from .vectors import EXACT_MAX, VectorIndex, choose_index_type, create_index, load_index

__all__ = ["IndexOptions", "Parts", "add_papers", "attach_map", "build_index", "check_fields",
           "encode_papers", "load_parts", "newest_generation", "remove_papers"]

#: Fields BM25 reads by default: what is embedded, plus the authors' keywords.
DEFAULT_LEXICAL_FIELDS: tuple[str, ...] = ("title", "abstract", "keywords")


@dataclass
class Parts:
    """What one generation searches: the vector index and the lexical index, same keys."""

    vectors: VectorIndex
    lexical: LexicalIndex


def load_parts(directory: IndexDirectory, manifest: Manifest) -> Parts:
    """The vector and lexical indexes of `manifest`'s generation, read from disk."""
    files = directory.files_dir(manifest)
    return Parts(load_index(files, manifest.index, int(manifest.model["dim"])),
                 LexicalIndex.load(files))


def check_fields(fields: Sequence[str], option: str = "--fields") -> tuple[str, ...]:
    """Text fields, validated: a non-empty subset of `TEXT_FIELDS`."""
    chosen = tuple(fields)
    unknown = [name for name in chosen if name not in TEXT_FIELDS]
    if unknown or not chosen:
        raise InputError(f"{option}: expected some of {', '.join(TEXT_FIELDS)}, got "
                         f"{', '.join(chosen) or 'nothing'}")
    return chosen


def _check_unique(papers: Sequence[Paper]) -> None:
    seen: dict[str, int] = {}
    for number, paper in enumerate(papers, 1):
        if paper.id in seen:
            raise InputError(f"duplicate id '{paper.id}' (records {seen[paper.id]} and {number})")
        seen[paper.id] = number


def _encode(encoder: Encoder, papers: Sequence[Paper], fields: Sequence[str],
            progress: bool, executor: Executor | None = None) -> np.ndarray:
    return encoder.encode([embedding_text(paper, fields) for paper in papers], progress=progress,
                          executor=executor)


def encode_papers(encoder: Encoder, manifest: Manifest, papers: Sequence[Paper], *,
                  progress: bool = False, executor: Executor | None = None) -> np.ndarray:
    """The vectors `add_papers` needs for `papers` in the index of `manifest`: made before
    the writers' lock is taken, as encoding can take hours and the lock is shared.
    `executor` computes the cache's misses (default: this process; or a Ray cluster)."""
    _check_unique(papers)
    return _encode(encoder, papers, manifest.text["fields"], progress, executor)


def _check_same_encoding(encoded_for: Manifest, newest: Manifest) -> None:
    """Refuse vectors made for an index another process has rebuilt differently since."""
    if (encoded_for.model["fingerprint"] != newest.model["fingerprint"]
            or encoded_for.model["backend"] != newest.model["backend"]
            or encoded_for.text["fields"] != newest.text["fields"]):
        raise IndexIncompatibleError(
            "the index was rebuilt with another model or text fields while these papers "
            "were being encoded; nothing was added: run the command again")


@dataclass(frozen=True)
class IndexOptions:
    """How a new index is built: its vector index type and what text is embedded."""

    index_type: str = "auto"
    index_params: dict[str, Any] | None = None
    fields: tuple[str, ...] = DEFAULT_FIELDS
    exact_max: int = EXACT_MAX
    memory_budget: int | None = None
    lexical_fields: tuple[str, ...] = DEFAULT_LEXICAL_FIELDS


def build_index(
    directory: IndexDirectory,
    papers: Sequence[Paper],
    encoder: Encoder,
    options: IndexOptions = IndexOptions(),
    *,
    vectors: np.ndarray | None = None,
    overwrite: bool = False,
    progress: bool = False,
    wait: float | None = DEFAULT_WAIT,
    executor: Executor | None = None,
) -> Manifest:
    """Encode `papers` and write them as a new index (replacing one if `overwrite`,
    waiting up to `wait` seconds for another writer of it to finish). `executor`
    computes the vectors the cache lacks (default: this process; or a Ray cluster).

    `vectors` skips the encoding: row i must be paper i's embedding by this very
    encoder (a corpus's published embeddings, say); they are normalised here.
    """
    fields = check_fields(options.fields)
    lexical_fields = check_fields(options.lexical_fields, "--lexical-fields")
    if not papers:
        raise InputError("no papers to index")
    _check_unique(papers)
    # Refuse what would fail before encoding, which can take hours.
    directory.ensure_writable(replace=overwrite)
    index = create_index(options.index_type, encoder.dim, len(papers), options.index_params,
                         options.exact_max, options.memory_budget)
    vectors = (_encode(encoder, papers, fields, progress, executor) if vectors is None
               else _given_vectors(vectors, len(papers), encoder.dim))
    with directory.write(replace=overwrite, wait=wait) as staging:
        with PaperStore.transaction(staging.dir / STORE_FILE, create=True) as store:
            keys = store.insert(papers)
        index.add(keys, vectors)
        parts = Parts(index, LexicalIndex.build(keys, _lexical_texts(papers, lexical_fields)))
        manifest = Manifest(
            model=encoder.record(),
            text={"fields": list(fields), "lexical_fields": list(lexical_fields)},
            index={**index.meta(), "auto": options.index_type == "auto",
                   "exact_max": options.exact_max, "memory_budget": options.memory_budget},
            count=len(papers),
            software=f"embedsearch {__version__}",
        )
        return _publish(directory, staging, parts, manifest)


def _given_vectors(vectors: np.ndarray, count: int, dim: int) -> np.ndarray:
    if vectors.shape != (count, dim):
        raise InputError(f"expected precomputed vectors of shape ({count}, {dim}), got "
                         f"{vectors.shape}")
    result = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(result, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise InputError("precomputed vectors hold zero or non-finite rows")
    normalised: np.ndarray = result / norms
    return normalised


def _lexical_texts(papers: Sequence[Paper], fields: Sequence[str]) -> list[str]:
    return [embedding_text(paper, fields) for paper in papers]


def _publish(directory: IndexDirectory, staging: Staging, parts: Parts,
             manifest: Manifest) -> Manifest:
    parts.vectors.save(staging.dir)
    parts.lexical.save(staging.dir)
    manifest.index = {**manifest.index, **parts.vectors.meta()}
    return directory.commit(staging, manifest)


def _copy_store(directory: IndexDirectory, manifest: Manifest,
                staging: Staging) -> AbstractContextManager[PaperStore]:
    """A transaction on a copy of the current store, inside the staged generation."""
    shutil.copyfile(directory.files_dir(manifest) / STORE_FILE, staging.dir / STORE_FILE)
    return PaperStore.transaction(staging.dir / STORE_FILE)


def _retype(index: VectorIndex, manifest: Manifest, count: int) -> VectorIndex:
    """The index re-made as the type `auto` now picks, when growth crossed the threshold."""
    if not manifest.index.get("auto"):
        return index
    wanted = choose_index_type(count, int(manifest.index.get("exact_max", EXACT_MAX)),
                               memory_budget=manifest.index.get("memory_budget"),
                               dim=index.dim)
    if wanted == index.kind:
        return index
    keys = index.keys()
    fresh = create_index(wanted, index.dim, count)
    fresh.add(keys, index.reconstruct(keys))
    return fresh


def add_papers(
    directory: IndexDirectory,
    staging: Staging,
    parts: Parts,
    papers: Sequence[Paper],
    vectors: np.ndarray,
    encoded_for: Manifest,
) -> tuple[Manifest, Parts] | None:
    """Add `papers` (row i of `vectors` is paper i's, made for `encoded_for`) to the
    generation `staging.previous`, whose `parts` these are; papers whose ids it already
    holds are skipped. Returns the new manifest and parts, or None if nothing was new.

    `parts` are changed in place: pass a private copy.
    """
    manifest = newest_generation(directory, staging)
    _check_same_encoding(encoded_for, manifest)
    with _copy_store(directory, manifest, staging) as store:
        known = store.keys_of(paper.id for paper in papers)
        fresh = [row for row, paper in enumerate(papers) if paper.id not in known]
        if not fresh:
            return None
        papers = [papers[row] for row in fresh]
        keys = store.insert(papers)
    parts.vectors.add(keys, vectors[fresh])
    parts.lexical.add(keys, _lexical_texts(papers, manifest.text["lexical_fields"]))
    parts.vectors = _retype(parts.vectors, manifest, len(parts.vectors))
    updated = dataclasses.replace(manifest, count=len(parts.vectors))
    return _publish(directory, staging, parts, updated), parts


def remove_papers(
    directory: IndexDirectory,
    staging: Staging,
    parts: Parts,
    paper_ids: Sequence[str],
) -> tuple[Manifest, Parts]:
    """Remove the papers `paper_ids` (all must be there) from the generation
    `staging.previous`, whose `parts` these are; returns the new manifest and parts.

    `parts` are changed in place: pass a private copy.
    """
    manifest = newest_generation(directory, staging)
    with _copy_store(directory, manifest, staging) as store:
        found = store.keys_of(paper_ids)
        for paper_id in paper_ids:
            if paper_id not in found:  # removed by another process meanwhile
                raise PaperNotFoundError(paper_id, directory.path)
        keys = np.array([found[paper_id] for paper_id in paper_ids], dtype=np.int64)
        store.delete(keys)
    parts.vectors.remove(keys)
    parts.lexical.remove(keys)
    updated = dataclasses.replace(manifest, count=len(parts.vectors))
    return _publish(directory, staging, parts, updated), parts


def attach_map(directory: IndexDirectory, manifest: Manifest, corpus_map: CorpusMap, *,
               wait: float | None = DEFAULT_WAIT) -> Manifest | None:
    """Publish `manifest`'s data with `corpus_map` as the next generation; returns its
    manifest, or None (writing nothing) if the index changed since `manifest`.

    The data files are shared with the current generation, so this costs the map file
    and one checksum pass. Build, add and remove never carry a map over: a generation's
    map always describes that generation's papers.
    """
    with directory.write(replace=True, wait=wait) as staging:
        if newest_generation(directory, staging).generation != manifest.generation:
            return None
        directory.link_files(manifest, staging, [n for n in manifest.files if n != MAP_FILE])
        save_map(corpus_map, staging.dir / MAP_FILE)
        return directory.commit(staging, dataclasses.replace(manifest))


def newest_generation(directory: IndexDirectory, staging: Staging) -> Manifest:
    """The generation an update derives from: the newest, read under the writers' lock."""
    if staging.previous is None:  # write() found no index: it was deleted meanwhile
        raise IndexNotFoundError(f"the index at {directory.path} was removed meanwhile; "
                                 "nothing was written")
    return staging.previous
