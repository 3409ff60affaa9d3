"""A consistent, read-only snapshot of a Zotero database that may be open in Zotero.

Zotero keeps `zotero.sqlite` open while it runs, often in WAL mode with the newest
items still in `zotero.sqlite-wal`, and often holding an exclusive lock. Three ways of
reading it go wrong, and are avoided here:

- opening it with `immutable=1` skips the write-ahead log: the newest items are missed;
- opening it for writing (or letting SQLite recover a hot journal in place) changes the
  user's library, and a reader's lock in rollback-journal mode makes Zotero wait;
- copying the files while Zotero writes can tear them.

So: a database in WAL mode is read through SQLite's own read-only mode (`mode=ro`),
in one read transaction, which neither blocks Zotero's writer nor misses the log. When
that is refused (Zotero's exclusive lock, a rollback-journal database, no shared-memory
file), the database and its log are copied into a private folder, no lock taken, and
the copy opened there: the copy is retried if either file changed while it was taken,
and checked with SQLite's `quick_check` before it is trusted.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ...errors import InputError

__all__ = ["snapshot"]

#: How long a read-only open waits for a lock before falling back to copying.
_BUSY_MS = 200
#: Copies taken before giving up on a database that keeps changing under us.
_COPY_TRIES = 4
_RETRY_S = 0.25
_SIDE_FILES = ("-wal", "-journal")


def _in_wal_mode(database: Path) -> bool:
    """Whether the file's header says WAL (bytes 18 and 19 are 2), read without SQLite."""
    with open(database, "rb") as handle:
        header = handle.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise InputError("is not an SQLite database (is it Zotero's zotero.sqlite?)",
                         path=database)
    return header[18] == 2 and header[19] == 2


def _read_only(database: Path) -> sqlite3.Connection | None:
    """The live database opened read-only in one read transaction, or None when SQLite
    cannot do that without waiting (an exclusive lock) or without writing."""
    uri = f"file:{quote(str(database))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=_BUSY_MS / 1000,
                                     isolation_level=None, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        connection.execute("BEGIN")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # takes the snapshot
        return connection
    except sqlite3.Error:
        connection.close()
        return None


def _stamp(database: Path) -> tuple[tuple[int, int], ...]:
    """(size, mtime) of the database and its side files: what changes when it is written."""
    stamps = []
    for suffix in ("", *_SIDE_FILES):
        try:
            stat = Path(f"{database}{suffix}").stat()
            stamps.append((stat.st_size, stat.st_mtime_ns))
        except FileNotFoundError:
            stamps.append((-1, -1))
    return tuple(stamps)


def _journal_pending(database: Path) -> bool:
    """A rollback journal with content: Zotero is midway through a write."""
    journal = Path(f"{database}-journal")
    return journal.exists() and journal.stat().st_size > 0


def _copied(database: Path, folder: Path) -> sqlite3.Connection:
    """A copy of the database and its write-ahead log, taken while neither changed, open
    in `folder` (SQLite replays the copied log into the copy, never into the original)."""
    for attempt in range(_COPY_TRIES):
        if attempt:
            time.sleep(_RETRY_S * attempt)
        before = _stamp(database)
        if _journal_pending(database):
            continue
        copy = folder / f"copy{attempt}.sqlite"
        shutil.copyfile(database, copy)
        wal = Path(f"{database}-wal")
        if wal.exists():
            shutil.copyfile(wal, Path(f"{copy}-wal"))
        if _stamp(database) != before or _journal_pending(database):
            continue
        connection = sqlite3.connect(copy, isolation_level=None, check_same_thread=False)
        try:
            verdict = connection.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise InputError(f"the database is damaged ({exc}); let Zotero repair it "
                             "(Help → Troubleshooting → Check Database Integrity)",
                             path=database) from None
        if verdict == "ok":
            connection.execute("BEGIN")
            return connection
        connection.close()
    raise InputError("Zotero kept writing its database while it was being read; try "
                     "again in a moment, or close Zotero first", path=database)


@contextmanager
def snapshot(database: Path) -> Iterator[sqlite3.Connection]:
    """`database` open for reading, as one consistent state that includes its
    write-ahead log; nothing of the original is ever written or locked for long.

    Raises:
        InputError: not an SQLite file, damaged, or written without pause while read.
    """
    if not database.is_file():
        raise InputError("no Zotero database here (looked for zotero.sqlite); give the "
                         "Zotero data directory (Zotero: Settings → Advanced → Files and "
                         "Folders → Data Directory Location)", path=database)
    connection = _read_only(database) if _in_wal_mode(database) else None
    with tempfile.TemporaryDirectory(prefix="embedsearch-zotero-") as folder:
        if connection is None:
            connection = _copied(database, Path(folder))
        try:
            yield connection
        except sqlite3.DatabaseError as exc:
            raise InputError(f"could not read the database ({exc}); is it a Zotero "
                             "database, and whole?", path=database) from None
        finally:
            connection.close()
