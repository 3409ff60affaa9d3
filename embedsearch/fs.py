"""Writing files safely, in one place: write aside, fsync, rename; and inter-process locks.

Everything embedsearch keeps on disk (index generations and manifests, exported models,
the backend verdicts) is written through these functions, so that a crash or a full disk
at any moment leaves either the old file or the new one, never a mixture.

Locks are `flock` locks: the kernel drops them when their process dies, so a writer
killed with SIGKILL never leaves a lock that blocks the next one.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import IndexBusyError

__all__ = ["FOREVER", "Lease", "exclusive_lock", "fsync_dir", "fsync_file", "make_temp_dir",
           "replace_file", "replace_folder", "try_exclusive", "write_atomic"]

#: `wait` value meaning "wait for the lock as long as it takes".
FOREVER: float | None = None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: mkdtemp and mkstemp create private entries; what we publish gets the usual permissions.
_UMASK = _umask()


def fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    """Make a rename or a new entry in `path` durable (the directory's own fsync)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_temp_dir(prefix: str, parent: Path) -> Path:
    """A new hidden folder in `parent` to stage files in, with the usual permissions."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    path.chmod(0o777 & ~_UMASK)
    return path


def replace_file(target: Path, write: Callable[[Path], object]) -> None:
    """Call `write(temp)` on a temporary path beside `target`, fsync, rename onto `target`."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    temp = Path(name)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        os.close(fd)
        write(temp)
        fsync_file(temp)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)  # gone already once renamed
    fsync_dir(target.parent)


def write_atomic(target: Path, data: str | bytes) -> None:
    """Replace `target` with `data` (text is written as UTF-8) in one rename."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    replace_file(target, lambda temp: temp.write_bytes(payload))


def replace_folder(target: Path, write: Callable[[Path], object]) -> None:
    """Call `write(temp_folder)`, then rename the folder to `target` (which must be absent)."""
    temp = make_temp_dir(f".{target.name}.", target.parent)
    try:
        write(temp)
        for entry in temp.rglob("*"):
            if entry.is_file():
                fsync_file(entry)
        os.rename(temp, target)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    fsync_dir(target.parent)


def _open_lock(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o666 & ~_UMASK)


@contextmanager
def exclusive_lock(path: Path, wait: float | None, what: str) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (made if absent) for the block.

    Waits up to `wait` seconds (FOREVER: no bound), then raises IndexBusyError naming
    `what`. Polling with a growing sleep rather than a blocking flock lets the wait be
    bounded without signals, which threads of a server cannot use.
    """
    fd = _open_lock(path)
    try:
        _acquire(fd, wait, what)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _acquire(fd: int, wait: float | None, what: str) -> None:
    if wait is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    start = time.monotonic()
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            waited = time.monotonic() - start
            if waited >= wait:
                raise IndexBusyError(
                    f"{what} is busy: another process has been writing it for {waited:.0f} s; "
                    "try again later, or wait longer with --wait SECONDS",
                    waited=waited) from None
            time.sleep(min(pause, max(wait - waited, 0.0)))
            pause = min(pause * 2, 0.25)


def try_exclusive(path: Path) -> int | None:
    """An exclusive lock on `path` if nobody holds any lock on it now: its descriptor
    (close it to release), else None. A missing file is None too."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


class Lease:
    """A shared lock on a file, held while something it guards is in use.

    Readers hold one on each generation they read; a writer removes a generation only
    once it can take the exclusive lock, i.e. when no reader holds a lease on it.
    """

    def __init__(self, path: Path) -> None:
        self._fd: int | None = None
        try:
            fd = os.open(path, os.O_RDONLY)
        except PermissionError:  # a read-only index nobody can clean up: no lease needed
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if not _same_file(fd, path):  # removed while we waited for it
                raise FileNotFoundError(errno.ENOENT, "generation removed", str(path))
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _same_file(fd: int, path: Path) -> bool:
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (here.st_ino, here.st_dev) == (held.st_ino, held.st_dev)
