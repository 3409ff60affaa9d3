"""The index directory on disk: manifest, checksums, generations, atomic replacement.

    NAME/
      manifest.json     format version, model, index type, count, files with sha256
      .lock             held by whoever writes
      g000003/          the current generation's files (papers.sqlite, vectors.faiss, ...)

Files of a generation are never changed once written. A write builds the next
generation in a hidden staging folder, fsyncs it, renames it into place and then
replaces manifest.json in one atomic rename: a reader sees the old index or the new
one, and a crash or failure leaves the old one exactly as it was. A new index is built
in a hidden sibling folder and renamed to NAME only when complete.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import (
    IndexCorruptError,
    IndexExistsError,
    IndexIncompatibleError,
    IndexNotFoundError,
)
from .hashing import sha256_file

__all__ = ["FORMAT_VERSION", "IndexDirectory", "Manifest", "Staging"]

FORMAT = "embedsearch-index"
FORMAT_VERSION = 2  # 2: a lexical index (lexical.npz) in every generation
MANIFEST = "manifest.json"
_LOCK = ".lock"
_GENERATION = re.compile(r"g\d{6}")


@dataclass
class Manifest:
    """Everything needed to check and load an index; written last, read first."""

    model: dict[str, Any]
    text: dict[str, Any]
    index: dict[str, Any]
    count: int
    metric: str = "inner_product"
    generation: int = 1
    created: str = ""
    updated: str = ""
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    software: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, where: Path) -> Manifest:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise IndexCorruptError(f"{where}: manifest is not valid JSON ({exc.msg}, "
                                    f"line {exc.lineno}); rebuild the index") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise IndexIncompatibleError(f"{where}: not an embedsearch index manifest")
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise IndexIncompatibleError(
                f"{where}: index format version {version!r} is not the version this "
                f"embedsearch reads ({FORMAT_VERSION}); rebuild the index with this "
                "version, or use the embedsearch that wrote it"
            )
        try:
            return cls(**data)
        except TypeError as exc:
            raise IndexCorruptError(f"{where}: manifest has unexpected fields ({exc})") from None


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: mkdtemp and mkstemp create private entries; an index gets the usual permissions.
_UMASK = _umask()


def _mkdtemp(prefix: str, parent: Path) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    path.chmod(0o777 & ~_UMASK)
    return path


def _generation_dir(generation: int) -> str:
    return f"g{generation:06d}"


@dataclass
class Staging:
    """A folder to write the next generation's files into, then `commit`."""

    dir: Path
    generation: int
    previous: Manifest | None


class IndexDirectory:
    """One index on disk at `path`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"IndexDirectory({str(self.path)!r})"

    def exists(self) -> bool:
        return (self.path / MANIFEST).is_file()

    def read_manifest(self) -> Manifest:
        """The manifest; refuses a missing, unreadable or foreign one with a clear error."""
        if not self.path.exists():
            raise IndexNotFoundError(f"no index at {self.path}: the directory does not "
                                     "exist (build one with `embedsearch build`)")
        if not self.path.is_dir():
            raise IndexNotFoundError(f"{self.path} is a file, not an index directory")
        target = self.path / MANIFEST
        if not target.is_file():
            raise IndexNotFoundError(f"{self.path} holds no embedsearch index "
                                     f"({MANIFEST} is missing)")
        return Manifest.from_json(target.read_text(encoding="utf-8"), target)

    def files_dir(self, manifest: Manifest) -> Path:
        """Where the files of `manifest`'s generation live."""
        return self.path / _generation_dir(manifest.generation)

    def verify(self, manifest: Manifest, *, checksums: bool = True) -> None:
        """Check every file of the manifest: present, of its size and (if asked) its hash."""
        folder = self.files_dir(manifest)
        for name, expected in manifest.files.items():
            target = folder / name
            if not target.is_file():
                raise IndexCorruptError(f"{target} is missing; rebuild the index")
            size = target.stat().st_size
            if size != expected["bytes"]:
                raise IndexCorruptError(f"{target} is {size} bytes, the manifest says "
                                        f"{expected['bytes']}: the file is truncated or "
                                        "damaged; rebuild the index")
            if checksums and sha256_file(target) != expected["sha256"]:
                raise IndexCorruptError(f"{target} does not match its checksum: the file "
                                        "is damaged; rebuild the index")

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
    def write(self, *, replace: bool = False) -> Iterator[Staging]:
        """Stage the next generation; the caller must `commit` it before the block ends.

        Without an existing index this creates one. With one, `replace` must be True:
        a rebuild with --overwrite, or an update (add, remove) that derives the new
        generation from the old.
        """
        self.ensure_writable(replace=replace)
        if self.exists():
            with self._locked():
                yield from self._stage_update()
        else:
            yield from self._stage_new()

    def _stage_new(self) -> Iterator[Staging]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        root = _mkdtemp(f".{self.path.name}.tmp-", self.path.parent)
        try:
            (root / _LOCK).touch()
            staging = Staging(root / _generation_dir(1), 1, None)
            staging.dir.mkdir()
            yield staging
            if not (root / MANIFEST).is_file():
                raise RuntimeError("index staging closed without commit")
            _fsync_dir(root)
            try:
                os.rename(root, self.path)
            except OSError:
                raise IndexExistsError(f"{self.path} was created by someone else meanwhile; "
                                       "nothing was written") from None
            _fsync_dir(self.path.parent)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise

    def _stage_update(self) -> Iterator[Staging]:
        previous = self.read_manifest()
        self._collect_garbage(keep=previous.generation)
        generation = previous.generation + 1
        final = self.path / _generation_dir(generation)
        temp = _mkdtemp(f".{final.name}.tmp-", self.path)
        try:
            yield Staging(temp, generation, previous)
        finally:
            shutil.rmtree(temp, ignore_errors=True)  # gone already if committed

    def link_files(self, manifest: Manifest, staging: Staging, names: Iterable[str]) -> None:
        """Put the files `names` of `manifest`'s generation into `staging` unchanged.

        Files of a generation are never modified, so a hard link shares them safely;
        a copy stands in where the filesystem has no hard links.
        """
        source = self.files_dir(manifest)
        for name in names:
            if name not in manifest.files:
                raise IndexCorruptError(f"{source / name} is not a file of this index")
            try:
                os.link(source / name, staging.dir / name)
            except OSError:
                shutil.copyfile(source / name, staging.dir / name)

    def commit(self, staging: Staging, manifest: Manifest) -> Manifest:
        """Checksum the staged files, move them into place and publish `manifest`."""
        manifest.generation = staging.generation
        manifest.created = manifest.created or _now()  # updates carry the original
        manifest.updated = _now()
        manifest.files = {}
        for target in sorted(staging.dir.iterdir()):
            _fsync_file(target)
            manifest.files[target.name] = {"bytes": target.stat().st_size,
                                            "sha256": sha256_file(target)}
        _fsync_dir(staging.dir)
        if staging.previous is None:  # a new index: renaming its root publishes it
            _write_atomic(staging.dir.parent / MANIFEST, manifest.to_json())
            return manifest
        final = self.path / _generation_dir(staging.generation)
        os.rename(staging.dir, final)
        _write_atomic(self.path / MANIFEST, manifest.to_json())
        self._collect_garbage(keep=staging.generation)
        return manifest

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.path / _LOCK, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _collect_garbage(self, keep: int) -> None:
        """Remove older generations and staging left by a crash (called under the lock)."""
        current = _generation_dir(keep)
        for entry in self.path.iterdir():
            stale = entry.name.startswith(".g") and ".tmp-" in entry.name
            old = _GENERATION.fullmatch(entry.name) is not None and entry.name != current
            if entry.is_dir() and (stale or old):
                shutil.rmtree(entry, ignore_errors=True)


def _write_atomic(target: Path, text: str) -> None:
    """Write `text` to `target` by way of a temporary file and one rename."""
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)
