"""The local storage (`LocalStorage`) and its writes: each stages a new generation that
shares every segment it keeps with the newest one (hard links, checksums carried over)
and writes only what it adds: a segment for an `add`, deletion files for a `remove`, the
segments a merge makes. It opens no segment it does not change. Views share segments
already in memory (`segment.OpenSegments`), so a reader that follows the index loads
only what a write added.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import DiskSpaceError, IndexCorruptError, InputError
from ...papers import Paper
from ..base import IndexOptions, PaperBatch, Storage, View, lexical_texts
from ..directory import Lease, Manifest, Staging
from ..records import IndexRules, LocalRecord, SegmentRecord, StorageRecord
from .additions import recorded
from .fulltext import PassageBatch
from .lexical import Postings
from .merging import MergePolicy, merge_disk_shortfall, merge_segments, plan_merge
from .paper_store import STORE_FILE, PaperStore
from .segment import (
    DELETIONS_FILE,
    OpenSegments,
    Segment,
    deletions_of,
    files_of,
    load_segment,
    segment_name,
    write_deletions,
    write_segment,
)
from .upgrading import upgrade_flat
from .vectors import EXACT_MAX, VectorIndex, create_index, passage_index_rule, segment_index_type
from .view import LocalView

_log = logging.getLogger("embedsearch.storage")

__all__ = ["LocalStorage"]


class LocalStorage(Storage):
    """Segments of FAISS vectors, BM25 postings and SQLite records in each generation's
    folder. `merge_policy` says which segments a write merges (see `merging`)."""

    kind = "local"
    merge_policy = MergePolicy()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._open = OpenSegments()

    def check_build(self, options: IndexOptions, count: int, dim: int, *,
                    overwrite: bool) -> None:
        _empty_index(options, dim, count)  # an unknown type or bad parameter fails here

    def build(self, staging: Staging, batches: Iterable[PaperBatch], manifest: Manifest,
              options: IndexOptions, *, progress: bool = False) -> Manifest:
        """Each batch becomes a segment, its vector indexes typed as an index of that
        batch alone would be; a build of several batches then rewrites the segments
        whose type the whole index's size changed (`_retyped`), and merges what the
        policy asks for: a build of 1M papers left ten segments of 100,000 in one tier,
        and the next `add` of 100 papers merged all ten (248 s, measured) before it
        returned."""
        rules = IndexRules(auto=options.index_type == "auto", requested=options.index_type,
                           overrides=dict(options.index_params or {}),
                           exact_max=_exact_max(options), memory_budget=options.memory_budget)
        own = LocalRecord((), 1, recorded((), 1), rules)
        manifest = dataclasses.replace(manifest, storage=StorageRecord(self.kind), local=own,
                                       count=0)
        dim = manifest.model.dim
        for batch in batches:
            manifest = self._appended(staging, manifest, batch,
                                      partial(_empty_index, options, dim),
                                      partial(_built_passage_index, options, dim))
            del batch  # written: not held while the next one is read and encoded
        if not manifest.local.segments:
            raise InputError("no papers to index")
        return self._commit(staging, self._merge_as_planned(staging,
                                                            self._retyped(staging, manifest)))

    def _retyped(self, staging: Staging, manifest: Manifest) -> Manifest:
        """`manifest` with each segment whose vector index is not the type `auto` picks
        for it in an index of this size rewritten alone: a build's first batches were
        typed before the corpus's size was known (exact while it seemed small)."""
        rules, exact_max = _rules(manifest)
        if len(manifest.local.segments) < 2 or not rules.auto:
            return manifest
        total = manifest.count
        for record in manifest.local.segments:
            wanted = segment_index_type(record.live, total, "auto", exact_max,
                                        memory_budget=rules.memory_budget,
                                        dim=manifest.model.dim)
            if wanted != record.index.type:
                manifest = self._merge(staging, manifest, [record.name])
        return manifest

    def view(self, manifest: Manifest, lease: Lease, *, checksums: bool) -> View:
        held: list[tuple[Segment, NDArray[np.int64]]] = []
        try:
            self.directory.verify(manifest, checksums=checksums)
            folder = self.directory.files_dir(manifest)
            for record in manifest.local.segments:
                identity = _identity(record, manifest)
                segment = self._open.acquire(identity, partial(
                    load_segment, folder / record.name, record, identity, manifest.model.dim))
                held.append((segment, deletions_of(folder / record.name)))
        except BaseException:
            for segment, _ in held:
                self._open.release(segment)
            lease.release()
            raise
        return LocalView(manifest, held, lease, self._open.release)

    def keys_of(self, manifest: Manifest, paper_ids: Sequence[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        folder = self.directory.files_dir(manifest)
        for record in manifest.local.segments:
            keys = _read_store(folder / record.name / STORE_FILE,
                               lambda store: store.keys_of(paper_ids))
            deleted = deletions_of(folder / record.name)
            found.update({i: k for i, k in keys.items() if k not in deleted})
        return found

    def insert(self, staging: Staging, newest: Manifest, papers: Sequence[Paper],
               vectors: NDArray[np.float32],
               passage_vectors: NDArray[np.float32] | None = None) -> Manifest:
        self._carry(newest, staging, newest.local.segments)
        manifest = self._added(staging, newest, PaperBatch(papers, vectors, passage_vectors))
        return self._commit(staging, self._merge_as_planned(staging, manifest))

    def delete(self, staging: Staging, newest: Manifest,
               keys: NDArray[np.int64]) -> Manifest:
        manifest = self._deleted(staging, newest, keys)
        return self._commit(staging, self._merge_as_planned(staging, manifest))

    def replace(self, staging: Staging, newest: Manifest, keys: NDArray[np.int64],
                papers: Sequence[Paper], vectors: NDArray[np.float32],
                passage_vectors: NDArray[np.float32] | None = None) -> Manifest:
        """One generation without `keys` and with `papers`: readers see the old papers
        or the new ones, never neither."""
        manifest = self._deleted(staging, newest, keys)
        if papers:
            manifest = self._added(staging, manifest,
                                   PaperBatch(papers, vectors, passage_vectors))
        return self._commit(staging, self._merge_as_planned(staging, manifest))

    def _added(self, staging: Staging, manifest: Manifest, batch: PaperBatch) -> Manifest:
        """`manifest` after a write that added `batch` as one new segment (an add's, a
        sync's), its vector indexes typed by the index's rules."""
        first = manifest.local.next_key
        manifest = self._appended(
            staging, manifest, batch,
            lambda size: _segment_index(manifest, size, manifest.count + size),
            partial(_passage_index, manifest))
        own = dataclasses.replace(manifest.local,
                                  additions=recorded(manifest.local.additions, first))
        return dataclasses.replace(manifest, local=own)

    def _appended(self, staging: Staging, manifest: Manifest, batch: PaperBatch,
                  index_for: Callable[[int], VectorIndex],
                  passage_index_for: Callable[[int], VectorIndex]) -> Manifest:
        """`manifest` with a new segment of `batch`, written into `staging`; its papers'
        and passages' vector indexes are made for their counts by `index_for` and
        `passage_index_for`."""
        own, papers = manifest.local, batch.papers
        keys = np.arange(own.next_key, own.next_key + len(papers), dtype=np.int64)
        name = _next_name(staging)
        lexical = Postings.build(keys, lexical_texts(papers, manifest))
        passages = PassageBatch.of(keys, papers, batch.passage_vectors, manifest.model.dim)
        full_text = (passages, passage_index_for(len(passages.keys))) if passages else None
        record = write_segment(staging.dir / name, name, keys,
                               lambda store: store.insert(keys, papers), batch.vectors,
                               lexical, index_for(len(papers)), full_text)
        own = dataclasses.replace(own, segments=(*own.segments, record),
                                  next_key=int(keys[-1]) + 1)
        return dataclasses.replace(manifest, local=own, count=manifest.count + len(papers))

    def _deleted(self, staging: Staging, newest: Manifest,
                 keys: NDArray[np.int64]) -> Manifest:
        """`newest` without `keys` (all held): every segment shared with `staging`,
        those holding some of `keys` with a new deletion file (or dropped if emptied)."""
        folder, records = self.directory.files_dir(newest), []
        for record in newest.local.segments:
            store = folder / record.name / STORE_FILE
            hits = _read_store(store, lambda s: s.held(keys)) if len(keys) else keys
            if not len(hits):
                self._carry(newest, staging, [record])
                records.append(record)
                continue
            deleted = np.union1d(deletions_of(folder / record.name), hits)
            if len(deleted) >= record.count:
                continue  # every paper of it removed: the segment is dropped
            kept = [n for n in files_of(record, newest.files)
                    if n != f"{record.name}/{DELETIONS_FILE}"]
            self.directory.link_files(newest, staging, kept)
            write_deletions(staging.dir / record.name, deleted)
            records.append(dataclasses.replace(record, deleted=len(deleted)))
        own = dataclasses.replace(newest.local, segments=tuple(records))
        return dataclasses.replace(newest, local=own, count=newest.count - len(keys))

    def replace_vectors(self, staging: Staging, newest: Manifest, keys: NDArray[np.int64],
                        vectors: NDArray[np.float32]) -> Manifest:
        folder, manifest = self.directory.files_dir(newest), newest
        self._carry(newest, staging, newest.local.segments)
        for record in newest.local.segments:
            held = _read_store(folder / record.name / STORE_FILE, lambda s: s.held(keys))
            if len(held):
                at = np.isin(keys, held)
                manifest = self._merge(staging, manifest, [record.name],
                                       (keys[at], vectors[at]))
        return self._commit(staging, manifest)

    def compact(self, staging: Staging, newest: Manifest) -> Manifest | None:
        """Merge every segment into one, without the removed papers; None, writing
        nothing, when the index is one segment with nothing removed already."""
        segments = newest.local.segments
        if len(segments) <= 1 and not newest.local.deleted:
            return None
        self._carry(newest, staging, segments)
        names = [record.name for record in segments]
        needed, free = merge_disk_shortfall([staging.dir / n for n in names], self.merge_policy)
        if needed:
            raise DiskSpaceError(
                f"{self.directory.path}: compacting needs {_size(needed)} free on its disk "
                f"(the index's segments again, and {_size(self.merge_policy.disk_reserve)} "
                f"to spare); it has {_size(free)}. Free some space and compact again",
                needed=needed, free=free, path=str(self.directory.path))
        return self._commit(staging, self._merge(staging, newest, names))

    def upgrade(self, staging: Staging, previous: Manifest, changes: list[str]) -> list[str]:
        if previous.local.segments:
            return super().upgrade(staging, previous, changes)
        upgraded, own = upgrade_flat(self.directory, staging, previous)
        self._commit(staging, upgraded)
        return changes + own

    # -- the steps every write shares ------------------------------------------------------
    def _carry(self, manifest: Manifest, staging: Staging,
               records: Sequence[SegmentRecord]) -> None:
        """Share the files of the segments `records` of `manifest` with `staging`."""
        for record in records:
            self.directory.link_files(manifest, staging, files_of(record, manifest.files))

    def _merge_as_planned(self, staging: Staging, manifest: Manifest) -> Manifest:
        """`manifest` after the merges the policy asks for, written into `staging`. A
        merge the disk has no room for is left for a later write (with a warning): the
        write itself is kept, and its segments are searched unmerged meanwhile."""
        while (names := plan_merge(manifest.local.segments, self.merge_policy)) is not None:
            needed, free = merge_disk_shortfall([staging.dir / n for n in names],
                                                self.merge_policy)
            if needed:
                _log.warning("%s: merging %d segments needs %s free on its disk, which "
                             "has %s; left unmerged until a write finds room",
                             self.directory.path, len(names), _size(needed), _size(free))
                break
            manifest = self._merge(staging, manifest, names)
        return manifest

    def _merge(self, staging: Staging, manifest: Manifest, names: Sequence[str],
               replaced: tuple[NDArray[np.int64], NDArray[np.float32]] | None = None
               ) -> Manifest:
        """Merge the staged segments `names` of `manifest` into one new segment."""
        own = manifest.local
        records = {record.name: record for record in own.segments}
        dim = manifest.model.dim
        parts = [(load_segment(staging.dir / name, records[name], name, dim),
                  deletions_of(staging.dir / name)) for name in names]
        try:
            merged = _next_name(staging)
            total = sum(record.live for record in own.segments)
            record = merge_segments(staging.dir, merged, parts,
                                    lambda size: _segment_index(manifest, size, total),
                                    partial(_passage_index, manifest), replaced)
        finally:
            for segment, _ in parts:
                segment.close()
        for name in names:
            shutil.rmtree(staging.dir / name)
            for file in files_of(records[name], staging.carried):
                del staging.carried[file]
        first = min(own.segments.index(records[name]) for name in names)
        kept = [r for r in own.segments if r.name not in names]
        own = dataclasses.replace(own, segments=(*kept[:first], record, *kept[first:]))
        return dataclasses.replace(manifest, local=own)

    def _commit(self, staging: Staging, manifest: Manifest) -> Manifest:
        """Publish `manifest`, its `index` record its largest segment's."""
        if manifest.local.segments:
            largest = max(manifest.local.segments, key=lambda record: record.live)
            manifest = dataclasses.replace(manifest, index=largest.index)
        return self.commit(staging, manifest)


def _size(count: int) -> str:
    """Bytes as a reader says them: 1.3 GB, 420 MB."""
    return f"{count / 1e9:.1f} GB" if count >= 1e9 else f"{count / 1e6:.0f} MB"


def _next_name(staging: Staging) -> str:
    """A name for one more segment of `staging`'s generation: past every one staged."""
    prefix = segment_name(staging.generation, 0)[:-1]
    taken = [int(entry.name[len(prefix):]) for entry in staging.dir.glob(f"{prefix}*")]
    return segment_name(staging.generation, max(taken, default=0) + 1)


def _identity(record: SegmentRecord, manifest: Manifest) -> str:
    """What tells a segment apart: its name, and its store's checksum (names restart
    in an index rebuilt elsewhere and restored here)."""
    store = manifest.files.get(f"{record.name}/{STORE_FILE}", {})
    return f"{record.name}:{store.get('sha256', '')}"


def _read_store(path: Path, read: Callable[[PaperStore], Any]) -> Any:
    """What `read` finds in the store at `path`, opened read-only for it alone."""
    store = PaperStore.open(path)
    try:
        return read(store)
    finally:
        store.close()


def _exact_max(options: IndexOptions) -> int:
    return EXACT_MAX if options.exact_max is None else options.exact_max


def _empty_index(options: IndexOptions, dim: int, count: int) -> VectorIndex:
    return create_index(options.index_type, dim, count, options.index_params,
                        _exact_max(options), options.memory_budget)


def _built_passage_index(options: IndexOptions, dim: int, count: int) -> VectorIndex:
    """An empty vector index for `count` passages of a new index built with `options`:
    the type `passage_index_rule` picks for that many passages alone."""
    kind, tuned = passage_index_rule(count, count, options.index_type, _exact_max(options),
                                     memory_budget=options.memory_budget, dim=dim)
    overrides = options.index_params if kind == options.index_type else tuned
    return create_index(kind, dim, count, overrides)


def _segment_index(manifest: Manifest, size: int, total: int) -> VectorIndex:
    """An empty vector index for a new segment of `size` papers in an index of `total`,
    of the type `segment_index_type` picks under the index's rules."""
    rules, exact_max = _rules(manifest)
    kind = segment_index_type(size, total, rules.requested, exact_max,
                              memory_budget=rules.memory_budget, dim=manifest.model.dim)
    overrides = dict(rules.overrides) if kind == rules.requested else None
    return create_index(kind, manifest.model.dim, size, overrides)


def _passage_index(manifest: Manifest, size: int) -> VectorIndex:
    """An empty vector index for a segment's `size` passages, of the type
    `passage_index_rule` picks under the index's rules for passages alone."""
    rules, exact_max = _rules(manifest)
    total = sum(record.full_text.count for record in manifest.local.segments
                if record.full_text is not None)
    kind, tuned = passage_index_rule(size, max(size, total), rules.requested, exact_max,
                                     memory_budget=rules.memory_budget, dim=manifest.model.dim)
    overrides = dict(rules.overrides) if kind == rules.requested else tuned
    return create_index(kind, manifest.model.dim, size, overrides)


def _rules(manifest: Manifest) -> tuple[IndexRules, int]:
    """The index's rules for new segments, and its exact limit."""
    rules = manifest.local.rules
    if rules is None:
        raise IndexCorruptError("the manifest of this local index has no rules for new "
                                "segments (auto, requested, exact_max); rebuild the index")
    return rules, EXACT_MAX if rules.exact_max is None else rules.exact_max
