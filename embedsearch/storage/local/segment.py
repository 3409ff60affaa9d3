"""A segment: an immutable piece of a local index, written once and then only shared.

    g000007/s000005-1/
      papers.sqlite     the segment's papers (records, filters, identifiers)
      vectors.faiss     its vector index (keys.npy beside it; ivfpq: codes and vectors)
      lexical.npz       its BM25 postings
      deletions.npy     the keys of its papers removed since (absent: none), written anew
                        by the generation that removes one
      passages/         its papers' full text, when any was read in full (`fulltext`)

A generation lists its segments in the manifest (`LocalRecord.segments`); the next one
shares every file it keeps by hard link and writes only what it adds: a new segment for
an `add`, a new deletions file for each segment a `remove` touches, a merged segment
for a merge (`merging`). A segment's name is `s` + the generation that wrote it + a
number within that generation, so names are never reused within an index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..records import SegmentRecord
from .fulltext import FullText, PassageBatch, load_full_text, write_full_text
from .lexical import Postings
from .paper_store import STORE_FILE, PaperStore
from .vectors import VectorIndex, load_index

__all__ = ["DELETIONS_FILE", "OpenSegments", "Segment", "deletions_of", "files_of", "load_segment",
           "segment_name", "write_deletions", "write_segment"]

DELETIONS_FILE = "deletions.npy"


def segment_name(generation: int, number: int) -> str:
    """The name of the `number`th segment written by `generation`."""
    return f"s{generation:06d}-{number}"


def files_of(record: SegmentRecord, files: Mapping[str, Any]) -> list[str]:
    """The files ("NAME/FILE") of the segment `record` among a manifest's `files`."""
    prefix = f"{record.name}/"
    return sorted(name for name in files if name.startswith(prefix))


@dataclass
class Segment:
    """One segment open for reading: its vector and lexical indexes in memory and its
    paper store open read-only, and its papers' passages when any was read in full.
    Shared by every view of a generation that lists it (`identity` tells two segments
    of one name apart across a rebuild or restore)."""

    name: str
    identity: str
    vectors: VectorIndex
    lexical: Postings
    store: PaperStore
    full_text: FullText | None = None

    def keys(self) -> NDArray[np.int64]:
        """Every key written to the segment, deleted ones included, ascending."""
        return self.lexical.keys()

    def live(self, deleted: NDArray[np.int64]) -> NDArray[np.bool_] | None:
        """Which of its rows (in `keys` order) are not among `deleted`; None when none
        is, so that the common case costs nothing."""
        return np.isin(self.keys(), deleted, invert=True) if len(deleted) else None

    def close(self) -> None:
        self.store.close()
        if self.full_text is not None:
            self.full_text.close()


def load_segment(folder: Path, record: SegmentRecord, identity: str, dim: int) -> Segment:
    """The segment `record` whose files are in `folder`."""
    store = PaperStore.open(folder / STORE_FILE)
    try:
        full_text = (load_full_text(folder, record.full_text, dim)
                     if record.full_text is not None else None)
    except BaseException:
        store.close()
        raise
    try:
        return Segment(record.name, identity, load_index(folder, record.index, dim),
                       Postings.load(folder), store, full_text)
    except BaseException:
        store.close()
        if full_text is not None:
            full_text.close()
        raise


def deletions_of(folder: Path) -> NDArray[np.int64]:
    """The deleted keys of the segment in `folder`, ascending (none: empty)."""
    path = folder / DELETIONS_FILE
    if not path.is_file():
        return np.zeros(0, np.int64)
    return np.asarray(np.load(path, allow_pickle=False), dtype=np.int64)


def write_deletions(folder: Path, keys: NDArray[np.int64]) -> None:
    """Record `keys` (all of the segment's deleted keys) as the segment's deletions."""
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / DELETIONS_FILE, np.unique(np.asarray(keys, dtype=np.int64)))


def write_segment(folder: Path, name: str, keys: NDArray[np.int64],
                  papers: Callable[[PaperStore], None], vectors: NDArray[np.float32],
                  lexical: Postings, index: VectorIndex,
                  full_text: tuple[PassageBatch, VectorIndex] | None = None) -> SegmentRecord:
    """Write a new segment of the papers `papers` stores into its new store (keys
    ascending; row i of `vectors` is key i's) into `folder`, with `lexical` its postings
    and `index` its vector index (empty, of the type its size calls for), and
    `full_text`'s passages with theirs; the manifest's record of it."""
    folder.mkdir(parents=True)
    with PaperStore.transaction(folder / STORE_FILE, create=True) as store:
        papers(store)
    index.add(keys, vectors)
    index.save(folder)
    lexical.save(folder)
    text = write_full_text(folder, *full_text) if full_text is not None else None
    return SegmentRecord(name, len(keys), 0, index.meta(), text)


class OpenSegments:
    """Segments in memory, shared by the views that list them (by identity), closed when
    the last view lets go: a reader that moves to a newer generation loads only the
    segments it lacks, and its memory does not double while it switches."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, list[Any]] = {}  # identity -> [segment, views holding it]

    def acquire(self, identity: str, load: Callable[[], Segment]) -> Segment:
        with self._lock:
            if identity in self._held:
                self._held[identity][1] += 1
                return self._held[identity][0]  # type: ignore[no-any-return]
        segment = load()  # outside the lock: other views go on meanwhile
        with self._lock:
            if identity in self._held:  # another thread loaded it meanwhile
                segment.close()
                self._held[identity][1] += 1
                return self._held[identity][0]  # type: ignore[no-any-return]
            self._held[identity] = [segment, 1]
            return segment

    def release(self, segment: Segment) -> None:
        with self._lock:
            entry = self._held.get(segment.identity)
            if entry is None or entry[0] is not segment:
                return
            entry[1] -= 1
            if entry[1] == 0:
                del self._held[segment.identity]
                segment.close()
