"""The Milvus storage's writes: a build into a fresh physical collection behind an alias,
and adds and removes in place (see the package's docstring)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import (
    ConfigurationError,
    EmbedSearchError,
    IndexCorruptError,
    IndexExistsError,
    IndexIncompatibleError,
    InputError,
)
from ...papers import Paper
from ...progress import progress_bar
from ...text.dates import now
from ...text.words import WordCounts
from ..base import IndexOptions, PaperBatch, Storage, View, lexical_texts
from ..directory import IndexDirectory, Lease, Manifest, Staging
from ..records import StorageRecord, VectorIndexRecord
from .connection import Connection, milvus_errors, quietly
from .schema import check_index_params, create_collection, paper_of, paper_rows
from .view import MilvusView, physical_name

__all__ = ["MilvusStorage", "check_name"]

_BATCH = 1_000  # rows an insert sends
_log = logging.getLogger("embedsearch.storage")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")  # Milvus allows 255; room for _gNNNNNN
_PROPERTY = "embedsearch."


class MilvusStorage(Storage):
    """An index's papers, vectors and BM25 terms in a Milvus collection (see module)."""

    kind = "milvus"

    def __init__(self, directory: IndexDirectory, where: StorageRecord | None = None,
                 secrets: dict[str, Any] | None = None) -> None:
        super().__init__(directory, where, secrets)
        self._token = self.secrets.get("token") or os.environ.get("MILVUS_TOKEN") or None
        self._connection: Connection | None = None

    def connect(self, uri: str) -> Connection:
        """The storage's one client (made on first use), for `uri`."""
        if self._connection is not None and self._connection.uri != uri:
            self.close()
        if self._connection is None:
            self._connection = Connection.get(uri, self._token or "")
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.release()
            self._connection = None

    def check_build(self, options: IndexOptions, count: int, dim: int, *,
                    overwrite: bool) -> None:
        uri, name = self.where.settings["uri"], check_name(self.where.settings["collection"])
        check_index_params(options.index_params)
        if self.connect(uri).call("has_collection", name) and not overwrite:
            raise IndexExistsError(f"the Milvus collection '{name}' already exists at {uri}; "
                                   "pass --overwrite to replace it")

    def build(self, staging: Staging, batches: Iterable[PaperBatch], manifest: Manifest,
              options: IndexOptions, *, progress: bool = False) -> Manifest:
        # A collection keeps each paper's abstract only (full text: the local storage).
        # The batches are joined: every row is made, and so checked, before Milvus is
        # touched, and the server holds the collection's memory, not this process.
        held = list(batches)
        papers = [paper for batch in held for paper in batch.papers]
        if not papers:
            raise InputError("no papers to index")
        vectors = np.concatenate([batch.vectors for batch in held])
        manifest = dataclasses.replace(manifest, count=len(papers))
        _warn_passages(papers)
        settings = {k: v for k, v in self.where.settings.items() if k != "physical"}
        uri, alias = settings["uri"], check_name(settings["collection"])
        hnsw = check_index_params(options.index_params)
        # Made (and so checked) before Milvus is touched.
        rows = paper_rows(papers, vectors, manifest.text.lexical_fields, now())
        connection = self.connect(uri)
        old = _alias_target(connection, alias)
        previous = staging.previous
        replaced = {old} if old else set()
        if previous is not None and previous.storage.kind == self.kind and \
                previous.storage.settings.get("uri") == uri:
            replaced.add(physical_name(previous))
        physical = _free_name(connection, f"{alias}_g{staging.generation:06d}", replaced)
        with milvus_errors(uri):
            create_collection(connection.client, physical, vectors.shape[1], hnsw)
        moved = False
        try:
            with progress_bar(len(rows), "Sending to Milvus", enabled=progress) as bar:
                for start in range(0, len(rows), _BATCH):
                    connection.call("insert", physical, rows[start:start + _BATCH])
                    bar.update(len(rows[start:start + _BATCH]))
            connection.call("flush", physical)
            connection.call("alter_collection_properties", physical, _properties(manifest))
            connection.call("load_collection", physical)
            WordCounts.build(lexical_texts(papers, manifest)).save(staging.dir)
            manifest = dataclasses.replace(
                manifest, index=VectorIndexRecord("milvus", "HNSW", {**hnsw, "metric": "IP"},
                                                  lexical="BM25"),
                storage=StorageRecord(self.kind, {**settings, "physical": physical}))
            _point_alias(connection, alias, physical, old)
            moved = True
            committed = self.commit(staging, manifest)
        except BaseException:
            _undo_build(connection, alias, physical, old, moved=moved)
            raise
        for name in replaced - {physical, alias}:  # the index it replaced: unused now
            _drop_quietly(connection, name)
        return committed

    def view(self, manifest: Manifest, lease: Lease, *, checksums: bool) -> View:
        try:
            self.directory.verify(manifest, checksums=checksums)
            connection = self._checked(manifest)
            words = WordCounts.load(self.directory.files_dir(manifest))
        except BaseException:
            lease.release()
            raise
        return MilvusView(manifest, connection.acquire(), words, lease)

    def _checked(self, manifest: Manifest) -> Connection:
        """The connection to `manifest`'s collection, which must be there, built with the
        manifest's model, and loaded (a new client finds it released)."""
        uri, name = manifest.storage.settings["uri"], physical_name(manifest)
        connection = self.connect(uri)
        shown = manifest.storage.settings["collection"]
        if not connection.call("has_collection", name):
            raise IndexCorruptError(f"the Milvus collection '{shown}' at {uri} is missing; "
                                    "rebuild the index")
        properties = connection.call("describe_collection", name).get("properties") or {}
        built_with = properties.get(f"{_PROPERTY}fingerprint")
        if built_with != manifest.model.fingerprint:
            raise IndexIncompatibleError(
                f"the Milvus collection '{shown}' at {uri} was built with model "
                f"{properties.get(f'{_PROPERTY}model')} ({built_with}); this index's manifest "
                f"says {manifest.model.name} ({manifest.model.fingerprint}); "
                "rebuild the index")
        connection.call("load_collection", name)
        return connection

    def keys_of(self, manifest: Manifest, paper_ids: Sequence[str]) -> dict[str, int]:
        return self._checked(manifest).oldest(physical_name(manifest), "paper_id", paper_ids)

    def insert(self, staging: Staging, newest: Manifest, papers: Sequence[Paper],
               vectors: NDArray[np.float32],
               passage_vectors: NDArray[np.float32] | None = None) -> Manifest:
        return self.replace(staging, newest, np.array([], dtype=np.int64), papers, vectors)

    def delete(self, staging: Staging, newest: Manifest,
               keys: NDArray[np.int64]) -> Manifest:
        return self.replace(staging, newest, keys, [], np.zeros((0, 0), dtype=np.float32))

    def replace(self, staging: Staging, newest: Manifest, keys: NDArray[np.int64],
                papers: Sequence[Paper], vectors: NDArray[np.float32],
                passage_vectors: NDArray[np.float32] | None = None) -> Manifest:
        """Milvus changes the collection in place, so readers may see the removal before
        the insert; the word counts and count are published once, after both."""
        _warn_passages(papers)
        connection, name = self._checked(newest), physical_name(newest)
        words = WordCounts.load(self.directory.files_dir(newest))
        held = [int(key) for key in keys]
        if held:
            removed = [paper_of(row["record"])
                       for row in connection.rows(name, "key", held, ["key", "record"])]
            words.remove(lexical_texts(removed, newest))
        rows = (paper_rows(papers, vectors, newest.text.lexical_fields, now()) if papers
                else [])
        words.add(lexical_texts(papers, newest))
        words.save(staging.dir)  # before the changes: a failure here changes nothing
        if held:
            connection.call("delete", name, ids=held)
        inserted: list[int] = []
        try:
            for start in range(0, len(rows), _BATCH):
                result = connection.call("insert", name, rows[start:start + _BATCH])
                inserted.extend(int(key) for key in result["ids"])
            return self._publish(staging, newest, connection)
        except BaseException:
            if inserted:  # the published generation must not gain papers it does not count
                quietly(connection, "delete", name, ids=inserted)
            raise

    def _publish(self, staging: Staging, newest: Manifest, connection: Connection) -> Manifest:
        """Commit `newest` with the live count, its word counts saved in `staging`."""
        manifest = dataclasses.replace(newest, count=connection.count(physical_name(newest), ""))
        return self.commit(staging, manifest)


def _properties(manifest: Manifest) -> dict[str, str]:
    """What the collection records of the index it holds, to be checked on opening."""
    return {f"{_PROPERTY}fingerprint": manifest.model.fingerprint,
            f"{_PROPERTY}model": manifest.model.name,
            f"{_PROPERTY}dim": str(manifest.model.dim),
            f"{_PROPERTY}fields": json.dumps(list(manifest.text.fields)),
            f"{_PROPERTY}lexical_fields": json.dumps(list(manifest.text.lexical_fields))}


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ConfigurationError(f"Milvus collection name {name!r}: use letters, digits and "
                                 "underscores, starting with a letter or underscore, at most "
                                 "200 characters")
    return name


def _alias_target(connection: Connection, alias: str) -> str | None:
    """The collection `alias` names: None if nothing, `alias` itself if a collection
    (not an alias) has that name."""
    if not connection.call("has_collection", alias):
        return None
    try:
        return str(connection.call("describe_alias", alias)["collection_name"])
    except EmbedSearchError:
        return alias


def _free_name(connection: Connection, base: str, keep: set[str]) -> str:
    """`base`, or `base_2`, ... if an index in use has that name; a collection of that
    name that no index uses was left by a build that died, and is dropped."""
    name, number = base, 1
    while connection.call("has_collection", name):
        if name not in keep:
            connection.call("drop_collection", name)
            break
        number += 1
        name = f"{base}_{number}"
    return name


def _point_alias(connection: Connection, alias: str, physical: str, old: str | None) -> None:
    if old is None:
        connection.call("create_alias", physical, alias)
    elif old == alias:  # a collection of that name, not ours: replaced (--overwrite said so)
        connection.call("drop_collection", alias)
        connection.call("create_alias", physical, alias)
    else:
        connection.call("alter_alias", physical, alias)
    connection.call("load_collection", physical)


def _undo_build(connection: Connection, alias: str, physical: str, old: str | None, *,
                moved: bool) -> None:
    """Put the alias back where it pointed (`old`) if it was `moved`; drop `physical`."""
    if moved and old is not None and old != alias:
        quietly(connection, "alter_alias", old, alias)
    elif moved:
        quietly(connection, "drop_alias", alias)
    _drop_quietly(connection, physical)


def _drop_quietly(connection: Connection, name: str) -> None:
    quietly(connection, "drop_collection", name)


def _warn_passages(papers: Sequence[Paper]) -> None:
    """Say that a collection leaves out what was read in full, rather than drop it
    silently."""
    read = sum(1 for paper in papers if paper.passages)
    if read:
        _log.warning("Milvus keeps each paper's abstract only: the passages of %d paper%s "
                     "read in full are not indexed (full text needs the local storage)",
                     read, "" if read == 1 else "s")
