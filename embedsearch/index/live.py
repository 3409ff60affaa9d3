"""`LiveIndex`: an index open for reading that follows its newest generation.

Before each call it checks (one stat of the manifest) whether another process published
a newer generation and, if so, switches to it between calls, so a server sees a cron
job's `add` without a restart and no result mixes two generations. Writes take the
index's writers' lock (see `directory`), hand the newest generation to its storage, and
serve what the storage published. It is the only place that opens views, and opens one
only when something is read: a process that only writes (`embedsearch add`) never
loads the index it extends.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..encoding import Prompts
from ..errors import IndexIncompatibleError, PaperNotFoundError
from ..papers import Paper
from ..storage import Storage, Update, View, passage_rows, storage_class, storage_kind
from ..storage.directory import DEFAULT_WAIT, IndexDirectory, Manifest, Staging, newest_generation

__all__ = ["LiveIndex", "Update", "check_same_encoding", "known_keys"]

class LiveIndex:
    """The served view of one index directory, swapped whole when it changes."""

    def __init__(self, directory: IndexDirectory, *, verify: bool = True,
                 secrets: Mapping[str, Any] | None = None) -> None:
        self.directory = directory
        #: Held for a whole call by readers, and by writers only for the swap.
        self.lock = threading.RLock()
        #: Held while a newer generation is read from disk, outside `lock`: one thread
        #: loads it while the others go on answering from the served one (never waiting
        #: for it, so a call made while holding `lock` cannot deadlock on it).
        self._loading = threading.Lock()
        #: Whether a call that finds a newer generation leaves reading it to a thread of
        #: its own (`follow_in_background`) rather than reading it first.
        self.background = False
        self._loader: threading.Thread | None = None
        self._verify = verify
        self._secrets = dict(secrets or {})
        self._storage: Storage | None = None
        self._view: View | None = None
        self._stamp = directory.stamp()
        #: The newest generation known while no view is open.
        self._published = directory.read_manifest()
        directory.verify(self._published, checksums=verify)

    @property
    def view(self) -> View:
        """The generation served now (read from disk at the first call that reads)."""
        if self._view is None:
            with self._loading:
                if self._view is None:
                    view, stamp = self._open(checksums=False)  # checked when opened
                    self._serve(view)
                    self._stamp = stamp
        assert self._view is not None
        return self._view

    def manifest(self) -> Manifest:
        """The manifest of the generation a call would read now, without reading its data
        when nothing is open yet."""
        if self._view is not None:
            with self.reading() as view:
                return view.manifest
        stamp = self.directory.stamp()
        if stamp != self._stamp:
            self._published, self._stamp = self.directory.read_manifest(), stamp
        return self._published

    def keys_of(self, paper_ids: list[str]) -> dict[str, int]:
        """The key of each of `paper_ids` the newest generation holds; read from the
        storage alone (no view opened) when nothing is open yet."""
        if self._view is not None:
            with self.reading() as view:
                return view.keys_of(paper_ids)
        manifest, lease = self.directory.open_current()  # a writer may publish meanwhile
        try:
            return self._storage_of(manifest).keys_of(manifest, paper_ids)
        finally:
            lease.release()

    def _open(self, *, checksums: bool) -> tuple[View, tuple[int, int, int] | None]:
        """The newest generation, open, and the manifest stamp it was read under."""
        stamp = self.directory.stamp()
        manifest, lease = self.directory.open_current()
        try:
            return self._storage_of(manifest).view(manifest, lease, checksums=checksums), stamp
        except BaseException:
            lease.release()
            raise

    def _storage_of(self, manifest: Manifest) -> Storage:
        """The storage `manifest`'s data lives in: the one in use unless a rebuild moved it."""
        current = self._storage
        if current is None or current.where != manifest.storage:
            current = storage_class(storage_kind(manifest))(self.directory, manifest.storage,
                                                            self._secrets)
            self._storage = current
        return current

    def _serve(self, view: View) -> None:
        """Answer from `view` from now on; let go of the previous one."""
        previous, self._view = self._view, view
        if previous is not None:
            previous.close()
            self.directory.collect_garbage()  # the generation let go of may be unused now
            del previous
            _return_freed_memory()

    def refresh(self) -> bool:
        """Switch to a newer generation if another process published one; True if it did.
        Files of a new generation are checked by size (their writer checksummed them).

        The new generation is read from disk without holding `lock`, by one thread; calls
        on other threads meanwhile answer from the served one rather than wait: at 85k
        papers reading a generation took about a second, which every query used to wait
        for at every publish.
        """
        if self._view is None:  # nothing served: only the newest manifest to note
            generation = self._published.generation
            return self.manifest().generation != generation
        if not self._changed() or not self._loading.acquire(blocking=False):
            return False
        try:
            if not self._changed():
                return False  # another thread loaded it just before
            view, stamp = self._open(checksums=False)
            with self.lock:
                if view.manifest.generation <= self.view.manifest.generation:
                    view.close()  # a write of this process served it (or a newer) first
                    return False
                self._serve(view)
                self._stamp = stamp
            return True
        finally:
            self._loading.release()

    def _changed(self) -> bool:
        """Whether the manifest names a generation other than the served one (one stat
        when nothing changed)."""
        with self.lock:
            stamp = self.directory.stamp()
            if stamp == self._stamp or stamp is None:
                return False
            if self.directory.read_manifest().generation == self.view.manifest.generation:
                self._stamp = stamp
                return False
            return True

    @contextmanager
    def reading(self, *, follow: bool = True) -> Iterator[View]:
        """Hold the index for one call, on the newest generation (in the background:
        on the served one, while a newer one is read by a thread of its own); with
        `follow` False, on the served one as it is (what a map computed from it names)."""
        if follow and not self.background:
            self.refresh()
        elif follow and self._changed() and (self._loader is None or not self._loader.is_alive()):
            self._loader = threading.Thread(target=self.refresh, name="embedsearch-refresh",
                                            daemon=True)
            self._loader.start()
        with self.lock:
            yield self.view

    def write(self, update: Update, *, wait: float | None = DEFAULT_WAIT) -> int:
        """Run `update` under the writers' lock on the newest generation, then serve what
        it published (if this process reads); returns how many papers that added
        (negative: removed), counted against the generation it started from, so another
        process's papers are never counted as ours.

        Queries go on meanwhile: they read the served view, which a write never changes
        (a write adds files to a new generation), and wait only for the swap. The new
        view shares every segment the served one holds, so the swap loads only what the
        write added.
        """
        with self.directory.write(replace=True, wait=wait) as staging:
            newest = newest_generation(self.directory, staging)
            storage = self._storage_of(newest)
            manifest = update(storage, staging, newest)
            if manifest is None:
                return 0
            stamp = self.directory.stamp()
            if self._view is None:
                self._published, self._stamp = manifest, stamp
            else:
                view = storage.view(manifest, self.directory.lease(manifest), checksums=False)
                with self.lock:
                    self._serve(view)
                    self._stamp = stamp
            return manifest.count - newest.count

    def add(self, encoded_for: Manifest, papers: Sequence[Paper],
            vectors: NDArray[np.float32], *, wait: float | None = DEFAULT_WAIT,
            passage_vectors: NDArray[np.float32] | None = None) -> int:
        """Add `papers` (row i of `vectors` is paper i's, encoded for the generation
        `encoded_for`; `passage_vectors` their passages', paper after paper) to the
        newest generation; papers another process added meanwhile are kept as they are.
        Returns how many were added."""

        def update(storage: Storage, staging: Staging, newest: Manifest) -> Manifest | None:
            check_same_encoding(encoded_for, newest)
            return storage.add(staging, newest, papers, vectors, passage_vectors)

        return self.write(update, wait=wait)

    def replace(self, encoded_for: Manifest, removed: Sequence[str], papers: Sequence[Paper],
                vectors: NDArray[np.float32], *, wait: float | None = DEFAULT_WAIT,
                passage_vectors: NDArray[np.float32] | None = None) -> int:
        """Remove the papers `removed` (ids; those already gone are passed over) and add
        `papers` (as for `add`) in one generation: a changed paper is among both, so
        readers see its old version or its new one. A new paper another process added
        meanwhile is kept as it is."""

        def update(storage: Storage, staging: Staging, newest: Manifest) -> Manifest | None:
            check_same_encoding(encoded_for, newest)
            keys = storage.keys_of(newest, list(removed))
            leaving = set(keys)
            present = storage.keys_of(newest, [paper.id for paper in papers])
            rows = [row for row, paper in enumerate(papers)
                    if paper.id not in present or paper.id in leaving]
            if not keys and not rows:
                return None
            held = np.array(sorted(set(keys.values())), dtype=np.int64)
            chosen = (None if passage_vectors is None
                      else passage_vectors[passage_rows(papers, rows)])
            return storage.replace(staging, newest, held, [papers[row] for row in rows],
                                   vectors[rows], chosen)

        return self.write(update, wait=wait)

    def remove(self, paper_ids: Sequence[str], *, wait: float | None = DEFAULT_WAIT) -> int:
        """Remove the papers of `paper_ids`, all or none: an unknown id is refused before
        the writers' lock is waited for. Returns how many were removed."""
        ids = list(dict.fromkeys(paper_ids))
        known = self.keys_of(ids)
        for paper_id in ids:
            if paper_id not in known:
                raise PaperNotFoundError(paper_id, self.directory.path)
        if ids:
            self.write(lambda storage, staging, newest: storage.remove(staging, newest, ids),
                       wait=wait)
        return len(ids)

    def compact(self, *, wait: float | None = DEFAULT_WAIT) -> bool:
        """Have the storage merge the newest generation's segments into one; whether it
        rewrote anything."""
        written: list[bool] = []

        def compacting(storage: Storage, staging: Staging, newest: Manifest) -> Manifest | None:
            manifest = storage.compact(staging, newest)
            written.append(manifest is not None)
            return manifest

        self.write(compacting, wait=wait)
        return any(written)

    def close(self) -> None:
        """Let go of the index (its lease, files and connections); twice is harmless."""
        if self._view is not None:
            self._view.close()
        if self._storage is not None:
            self._storage.close()
            self._storage = None


def known_keys(view: View, paper_ids: Iterable[str], index: Path) -> NDArray[np.int64]:
    """The keys of `paper_ids` in `view`, sorted and once each; an id it lacks is refused
    (`PaperNotFoundError`, naming the index at `index`)."""
    ids = list(paper_ids)
    found = view.keys_of(ids)
    for paper_id in ids:
        if paper_id not in found:
            raise PaperNotFoundError(paper_id, index)
    return np.array(sorted(set(found.values())), dtype=np.int64)


def check_same_encoding(encoded_for: Manifest, newest: Manifest) -> None:
    """Refuse vectors made for an index another process has rebuilt differently since."""
    before, now = encoded_for.model, newest.model
    if (before.fingerprint != now.fingerprint or before.backend != now.backend
            or not Prompts.from_record(before.prompts).same_as(Prompts.from_record(now.prompts))
            or encoded_for.text.fields != newest.text.fields):
        raise IndexIncompatibleError(
            "the index was rebuilt with another model, prompts or text fields while these "
            "papers were being encoded; nothing was added: run the command again")


def _return_freed_memory() -> None:
    """Hand the heap a released generation freed back to the system (glibc's malloc_trim;
    elsewhere nothing). Its arrays are a few hundred MB freed at once, which glibc keeps
    for reuse: measured at 100k papers, a process that had read the index twice held
    547 MB where 416 MB were in use, so a server's resident memory said nothing useful
    about its index after each publish."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
