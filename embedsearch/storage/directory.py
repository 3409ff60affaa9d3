"""The index directory on disk: manifest, checksums, generations, atomic replacement.

    NAME/
      manifest.json     format version, model, index type, count, files with sha256
      .lock             the writers' lock: one writer at a time, across processes
      watches.json      the saved searches (a side file: see SIDE_FILES)
      g000003/          the current generation's files
        .lease          readers of this generation hold a shared lock on it
        s000002-1/      a segment of a local index (see storage/local/segment.py)

Files of a generation are never changed once written, so the next generation shares the
files it keeps by hard link (`link_files`), with the checksums the manifest already has:
a write costs the files it adds, not the index it extends. A writer takes the lock, reads the
newest manifest, builds the next generation from it in a hidden staging folder, fsyncs
it, renames it into place and then replaces manifest.json in one atomic rename: a reader
sees the old index or the new one, and a crash or failure leaves the old one exactly as
it was. A new index is built in a hidden sibling folder and renamed to NAME only when
complete.

An old generation is deleted only when no process holds a lease on it, so a server that
still answers from generation 3 never meets a vanished file while a cron job publishes
generation 4; the last reader to let go, or the next writer, removes it.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

from ..errors import (
    IndexCorruptError,
    IndexExistsError,
    IndexIncompatibleError,
    IndexNotFoundError,
)
from ..fs import (
    Lease,
    exclusive_lock,
    fsync_dir,
    make_temp_dir,
    try_exclusive,
    write_atomic,
)
from .checksums import file_entries, file_problems, files_under
from .manifest import FORMAT_VERSION, MANIFEST, Manifest

__all__ = ["DEFAULT_WAIT", "FORMAT_VERSION", "SIDE_FILES", "IndexDirectory", "Lease", "Manifest",
           "Staging", "newest_generation"]

#: Files an index keeps beside its manifest, outside its generations, each replaced in
#: one rename by its owner: the saved searches (`watching`). Backups and restores carry
#: them; a write of the index never touches them.
SIDE_FILES = ("watches.json",)

_LOCK = ".lock"
_LEASE = ".lease"
#: How long a writer waits for another one by default: longer than any add or remove
#: holds the lock (they encode before taking it), short enough to notice a stuck one.
DEFAULT_WAIT = 600.0
#: How often a reader looks for a newer generation while it keeps failing to lease one.
_OPEN_ATTEMPTS = 20
#: A build's staging folder exists for microseconds before its lock does; one without a
#: lock that is older than this belongs to a build that died in between.
_UNLOCKED_STAGING_AGE = 60.0
_GENERATION = re.compile(r"g\d{6}")


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def _generation_dir(generation: int) -> str:
    return f"g{generation:06d}"


@dataclass
class Staging:
    """A folder to write the next generation's files into, then `commit`. `carried`: the
    manifest entries (size, sha256) of files linked from a published generation, which
    `commit` keeps instead of hashing them again."""

    dir: Path
    generation: int
    previous: Manifest | None
    carried: dict[str, dict[str, Any]] = field(default_factory=dict)


class IndexDirectory:
    """One index on disk at `path`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"IndexDirectory({str(self.path)!r})"

    def exists(self) -> bool:
        return (self.path / MANIFEST).is_file()

    def read_manifest(self, *, upgrading: bool = False) -> Manifest:
        """The manifest; refuses a missing, unreadable or foreign one with a clear error,
        and one of an earlier format unless `upgrading` (see `manifest`)."""
        if not self.path.exists():
            raise IndexNotFoundError(f"no index at {self.path}: the directory does not "
                                     "exist; build one there with `embedsearch build "
                                     f"FILE --out {self.path}`")
        if not self.path.is_dir():
            # Most often a bibliography given where its index was meant ("--index a.bib").
            raise IndexNotFoundError(f"{self.path} is a file, not an index folder; build "
                                     f"an index of it with `embedsearch build {self.path} "
                                     "--out DIR` and open DIR")
        manifest_file = self.path / MANIFEST
        if not manifest_file.is_file():
            raise IndexNotFoundError(f"{self.path} holds no embedsearch index ({MANIFEST} "
                                     "is missing); open the folder that `embedsearch build "
                                     "FILE --out DIR` wrote")
        return Manifest.from_json(manifest_file.read_text(encoding="utf-8"), manifest_file,
                                  upgrading=upgrading)

    def files_dir(self, manifest: Manifest) -> Path:
        """Where the files of `manifest`'s generation live."""
        return self.path / _generation_dir(manifest.generation)

    def verify(self, manifest: Manifest, *, checksums: bool = True) -> None:
        """Check every file of the manifest: present, of its size and (if asked) its hash."""
        problems = file_problems(self.files_dir(manifest), manifest.files, checksums)
        if problems:
            raise IndexCorruptError(f"{problems[0]}; rebuild the index")

    def problems(self, manifest: Manifest) -> list[str]:
        """Everything wrong on disk with `manifest`'s generation (`file_problems`) and
        beside it (`strays`); one line each, [] when whole."""
        return self.file_problems(manifest) + self.strays(manifest)

    def file_problems(self, manifest: Manifest) -> list[str]:
        """The files of `manifest`'s generation that are missing, cut short, not
        matching their sha256, or not the manifest's."""
        folder = self.files_dir(manifest)
        found = file_problems(folder, manifest.files, True)
        if folder.is_dir():
            found += [f"{folder / name} is not a file of this generation" for name in
                      files_under(folder) if name not in manifest.files and name != _LEASE]
        return found

    def strays(self, manifest: Manifest) -> list[str]:
        """What a writer or reader that died left beside the current generation: staging
        folders (while no writer holds the lock), a manifest written aside, generations
        never published, and old ones no reader holds (the next write removes those)."""
        writing = _held(self.path / _LOCK)
        found = []
        for entry in sorted(self.path.iterdir()):
            if entry.name.startswith((".g", f".{MANIFEST}.")) and not writing:
                found.append(f"{entry} was left by a writer that died")
            elif _GENERATION.fullmatch(entry.name) and entry.is_dir():
                number = int(entry.name[1:])
                if number > manifest.generation:
                    found.append(f"{entry} was never published (its writer died)")
                elif number < manifest.generation and not _held(self._lease_file(entry)):
                    found.append(f"{entry} is an old generation no reader holds")
        return found

    def stamp(self) -> tuple[int, int, int] | None:
        """What identifies the manifest file now (inode, mtime, size): a change means a
        newer generation may be published. One stat: cheap enough for every request."""
        try:
            info = os.stat(self.path / MANIFEST)
        except (FileNotFoundError, NotADirectoryError):  # read_manifest says which
            return None
        return info.st_ino, info.st_mtime_ns, info.st_size

    def open_current(self) -> tuple[Manifest, Lease]:
        """The newest manifest and a lease that keeps its generation's files from removal.

        A writer may publish and remove a generation between our reading the manifest and
        leasing it; then the manifest names a newer one, and we try again.
        """
        for _ in range(_OPEN_ATTEMPTS):
            manifest = self.read_manifest()
            folder = self.files_dir(manifest)
            try:
                return manifest, self.lease(manifest)
            except FileNotFoundError:
                if self.read_manifest().generation == manifest.generation:
                    raise IndexCorruptError(f"{folder} is missing; rebuild the index") from None
        raise IndexCorruptError(f"{self.path} changed {_OPEN_ATTEMPTS} times while being "
                                "opened; try again")

    def lease(self, manifest: Manifest) -> Lease:
        """A reader's lease on `manifest`'s generation (FileNotFoundError: it is gone)."""
        return Lease(self._lease_file(self.files_dir(manifest)))

    @staticmethod
    def _lease_file(folder: Path) -> Path:
        lease = folder / _LEASE
        if folder.is_dir() and not lease.exists():  # a generation written before leases
            try:
                lease.touch()
            except OSError:
                pass  # read-only: nobody can remove it either, so Lease reads it unleased
        return lease

    # -- writing ---------------------------------------------------------------------------
    def ensure_writable(self, *, replace: bool) -> None:
        """Refuse early what `write` would refuse: an index or a foreign folder in the way."""
        if self.exists():
            if not replace:
                raise IndexExistsError(f"an index already exists at {self.path}; pass "
                                       "--overwrite to replace it")
        elif self.path.exists() and (not self.path.is_dir() or any(self.path.iterdir())):
            raise IndexExistsError(f"{self.path} exists and is not an embedsearch index; "
                                   "choose another --out or remove it")

    @contextmanager
    def write(self, *, replace: bool = False, wait: float | None = DEFAULT_WAIT,
              upgrading: bool = False) -> Iterator[Staging]:
        """Stage the next generation; the caller must `commit` it before the block ends,
        or leave it uncommitted to write nothing.

        Without an existing index this creates one. With one, `replace` must be True:
        a rebuild with --overwrite, or an update (add, remove) that derives the new
        generation from `Staging.previous`, the newest manifest read under the writers'
        lock (waiting up to `wait` seconds for it; IndexBusyError after that).
        `upgrading`: an index of an earlier format is read, migrated, as `previous`.
        """
        self.ensure_writable(replace=replace)
        if self.exists():
            with self.locked(wait):
                yield from self._stage_update(upgrading)
        else:
            yield from self._stage_new()

    def locked(self, wait: float | None = DEFAULT_WAIT) -> AbstractContextManager[None]:
        """Hold the writers' lock of this (existing) index: no other process or thread
        writes it meanwhile. IndexBusyError after `wait` seconds (None: no bound)."""
        return exclusive_lock(self.path / _LOCK, wait, f"index {self.path}")

    def _stage_new(self) -> Iterator[Staging]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._remove_dead_builds()
        root = make_temp_dir(f".{self.path.name}.tmp-", self.path.parent)
        try:
            # Held from the start, so that no other build takes this folder for a dead one;
            # after the rename it is the index's own writers' lock.
            with exclusive_lock(root / _LOCK, 0, f"index {self.path}"):
                staging = Staging(root / _generation_dir(1), 1, None)
                staging.dir.mkdir()
                yield staging
                if not (root / MANIFEST).is_file():
                    return  # nothing committed: nothing published
                fsync_dir(root)
                try:
                    os.rename(root, self.path)
                except OSError:
                    raise IndexExistsError(f"{self.path} was created by someone else "
                                           "meanwhile; nothing was written") from None
                fsync_dir(self.path.parent)
        finally:
            shutil.rmtree(root, ignore_errors=True)  # gone already once renamed

    def _remove_dead_builds(self) -> None:
        """Remove staging folders of builds of this index whose process died."""
        for entry in self.path.parent.glob(f".{glob_escape(self.path.name)}.tmp-*"):
            fd = try_exclusive(entry / _LOCK)
            if fd is not None:
                shutil.rmtree(entry, ignore_errors=True)
                os.close(fd)
            elif not (entry / _LOCK).exists() and _age(entry) > _UNLOCKED_STAGING_AGE:
                shutil.rmtree(entry, ignore_errors=True)  # died before taking its lock

    def _stage_update(self, upgrading: bool = False) -> Iterator[Staging]:
        previous = self.read_manifest(upgrading=upgrading)
        self.collect_garbage(staging=True)
        generation = previous.generation + 1
        final = self.path / _generation_dir(generation)
        temp = make_temp_dir(f".{final.name}.tmp-", self.path)
        try:
            yield Staging(temp, generation, previous)
        finally:
            shutil.rmtree(temp, ignore_errors=True)  # gone already if committed

    def link_files(self, manifest: Manifest, staging: Staging, names: Iterable[str]) -> None:
        """Put the files `names` ("FILE" or "SEGMENT/FILE") of `manifest`'s generation into
        `staging` unchanged, their checksums carried over rather than computed again.

        Files of a generation are never modified, so a hard link shares them safely;
        a copy stands in where the filesystem has no hard links.
        """
        source = self.files_dir(manifest)
        for name in names:
            if name not in manifest.files:
                raise IndexCorruptError(f"{source / name} is not a file of this index")
            (staging.dir / name).parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source / name, staging.dir / name)
            except OSError:
                shutil.copyfile(source / name, staging.dir / name)
            staging.carried[name] = manifest.files[name]

    def commit(self, staging: Staging, manifest: Manifest) -> Manifest:
        """Checksum the staged files (those carried over keep their entries), move them
        into place and publish `manifest`."""
        manifest.generation = staging.generation
        manifest.created = manifest.created or _now()  # updates carry the original
        manifest.updated = _now()
        manifest.files = file_entries(staging.dir, staging.carried)
        (staging.dir / _LEASE).touch()
        for folder in {(staging.dir / name).parent for name in manifest.files}:
            fsync_dir(folder)
        fsync_dir(staging.dir)
        if staging.previous is None:  # a new index: renaming its root publishes it
            write_atomic(staging.dir.parent / MANIFEST, manifest.to_json())
            return manifest
        final = self.path / _generation_dir(staging.generation)
        os.rename(staging.dir, final)
        write_atomic(self.path / MANIFEST, manifest.to_json())
        self.collect_garbage()
        return manifest

    def collect_garbage(self, *, staging: bool = False) -> None:
        """Remove generations older than the current one that no reader holds a lease on,
        and (`staging`, only under the writers' lock) what a dead writer left: staging
        folders, a manifest written aside, a generation it never published.

        Safe without the writers' lock for generations: a writer only ever reads the
        current generation, and newer ones are never touched here.
        """
        try:
            current = self.read_manifest().generation
        except (IndexNotFoundError, IndexCorruptError, IndexIncompatibleError):
            return
        for entry in self.path.iterdir():
            if staging and entry.name.startswith(".g") and ".tmp-" in entry.name:
                shutil.rmtree(entry, ignore_errors=True)
            elif staging and entry.name.startswith(f".{MANIFEST}."):
                entry.unlink(missing_ok=True)  # a manifest write that died before its rename
            elif not (_GENERATION.fullmatch(entry.name) and entry.is_dir()):
                continue
            elif int(entry.name[1:]) < current:
                _remove_unleased(entry)
            elif staging and int(entry.name[1:]) > current:
                # Renamed into place by a writer that died before publishing its manifest:
                # no manifest names it, so no reader can have it open.
                shutil.rmtree(entry, ignore_errors=True)


def _held(lock: Path) -> bool:
    """Whether a process holds `lock` (a writers' lock or a reader's lease) now."""
    fd = try_exclusive(lock)
    if fd is None:
        return True
    os.close(fd)
    return False


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _remove_unleased(folder: Path) -> None:
    lease = IndexDirectory._lease_file(folder)
    fd = try_exclusive(lease)
    if fd is None:
        return  # a reader holds it (or it cannot be locked): the next writer tries again
    try:
        shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(fd)


def newest_generation(directory: IndexDirectory, staging: Staging) -> Manifest:
    """The generation an update derives from: the newest, read under the writers' lock."""
    if staging.previous is None:  # write() found no index: it was deleted meanwhile
        raise IndexNotFoundError(f"the index at {directory.path} was removed meanwhile; "
                                 "nothing was written")
    return staging.previous
