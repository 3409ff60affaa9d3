"""One generation of an index, open for reading.

A `Snapshot` is what answers queries from one generation (its manifest, vector and
lexical indexes and paper store) together with the lease that keeps that generation's
files on disk while it is open. The engine serves one snapshot at a time and swaps it
whole, so no call ever mixes two generations.
"""

from __future__ import annotations

from dataclasses import dataclass

from .indexing import Parts, load_parts
from .layout import IndexDirectory, Lease, Manifest
from .store import STORE_FILE, PaperStore

__all__ = ["Snapshot"]


@dataclass
class Snapshot:
    """A generation open for reading; `close` lets its files be removed."""

    manifest: Manifest
    parts: Parts
    store: PaperStore
    lease: Lease

    @classmethod
    def open(cls, directory: IndexDirectory, *, checksums: bool) -> Snapshot:
        """The newest generation of `directory`, its files checked (sha256 if `checksums`,
        else sizes only)."""
        manifest, lease = directory.open_current()
        try:
            directory.verify(manifest, checksums=checksums)
            return cls.of(directory, manifest, load_parts(directory, manifest), lease)
        except BaseException:
            lease.release()
            raise

    @classmethod
    def of(cls, directory: IndexDirectory, manifest: Manifest, parts: Parts,
           lease: Lease | None = None) -> Snapshot:
        """The generation `manifest` whose `parts` are already in memory (one this process
        just wrote), leased unless `lease` is given."""
        lease = lease or directory.lease(manifest)
        try:
            store = PaperStore.open(directory.files_dir(manifest) / STORE_FILE)
        except BaseException:
            lease.release()
            raise
        return cls(manifest, parts, store, lease)

    def close(self) -> None:
        self.store.close()
        self.lease.release()
