"""Backing up an index while it serves, and restoring one in place.

A backup copies the current generation under a reader's lease: the generation's files
are never changed once written, and the lease keeps the next writer from removing
them, so the copy is consistent while the server answers and cron adds papers, and no
lock is held for its duration. The copy is committed as a new index (it opens as it
is) and its checksums are compared with the source manifest's before it is published.
A backup into a folder that holds an earlier backup is a new generation of that backup:
the files it already holds with the same name and sha256 (segments never change once
written) are shared by hard link, and only the others are copied and checksummed.

A restore replaces an index with a backup as one new generation, through the writers'
lock: a running server switches to it at its next request, as it does to any write.
Both carry the index's side files (its saved searches) with it.

An index whose data lives in Milvus is backed up with Milvus's own tools
(docs/how-to/operate-index.md); these refuse it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

from ..errors import ConfigurationError, IndexCorruptError
from ..fs import write_atomic
from .base import storage_kind
from .directory import DEFAULT_WAIT, SIDE_FILES, IndexDirectory, Manifest

__all__ = ["backup_index", "restore_index"]


def _local_only(manifest: Manifest, what: str) -> None:
    kind = storage_kind(manifest)
    if kind != "local":
        raise ConfigurationError(
            f"{what} copies an index's files; this one keeps its data in {kind}: back up "
            "its collection with that database's own tools (docs/how-to/operate-index.md)",
            parameter="index")


def _copy(source: Path, destination: Path, names: list[str]) -> None:
    for name in names:
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, destination / name)


def _carry_side_files(source: Path, destination: Path) -> None:
    """The side files (`SIDE_FILES`: the saved searches) that `source` has, replaced in
    `destination` in one rename each."""
    for name in SIDE_FILES:
        if (source / name).is_file():
            write_atomic(destination / name, (source / name).read_bytes())


def backup_index(index: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Manifest:
    """Copy the current generation of the index at `index` to `dest` (a new folder, or
    an earlier backup: then only what it lacks is copied) as an index of its own,
    verified against the source's checksums; its manifest."""
    destination = IndexDirectory(dest)
    earlier = destination.exists()
    if not earlier and Path(dest).exists() and (not Path(dest).is_dir()
                                                or any(Path(dest).iterdir())):
        raise ConfigurationError(f"{dest} exists and is not a backup; a backup goes to a new "
                                 "folder or to an earlier backup", parameter="dest")
    source = IndexDirectory(index)
    manifest, lease = source.open_current()
    try:
        _local_only(manifest, "backup")
        with destination.write(replace=earlier) as staging:
            held = staging.previous.files if staging.previous is not None else {}
            kept = [name for name, entry in manifest.files.items() if held.get(name) == entry]
            if staging.previous is not None:
                destination.link_files(staging.previous, staging, kept)
            _copy(source.files_dir(manifest), staging.dir,
                  sorted(set(manifest.files) - set(kept)))
            copied = destination.commit(staging, dataclasses.replace(manifest, files={}))
            if copied.files != manifest.files:
                raise IndexCorruptError(f"the copy in {dest} does not match {index}'s "
                                        "checksums; nothing was published")
        _carry_side_files(source.path, destination.path)
        return copied
    finally:
        lease.release()


def restore_index(backup: str | os.PathLike[str], index: str | os.PathLike[str], *,
                  wait: float | None = DEFAULT_WAIT) -> Manifest:
    """Replace the index at `index` (or create it) with the backup at `backup`, checked
    first (every file's sha256), as one new generation published under the writers'
    lock; the published manifest."""
    saved = IndexDirectory(backup)
    manifest, lease = saved.open_current()
    try:
        _local_only(manifest, "restore")
        saved.verify(manifest, checksums=True)
        destination = IndexDirectory(index)
        with destination.write(replace=True, wait=wait) as staging:
            _copy(saved.files_dir(manifest), staging.dir, sorted(manifest.files))
            restored = destination.commit(staging, dataclasses.replace(manifest, files={}))
        _carry_side_files(saved.path, destination.path)
        return restored
    finally:
        lease.release()
