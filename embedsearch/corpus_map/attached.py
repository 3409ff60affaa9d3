"""The corpus map beside an open index: the map of the generation being served, read
once per generation, and a new map computed from a read snapshot of the index and
stored as the next generation (`attach_map`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager

import numpy as np
from numpy.typing import NDArray

from ..papers import Paper
from ..storage import View
from ..storage.directory import DEFAULT_WAIT, IndexDirectory, Manifest, newest_generation
from .projection import MAP_FILE, CorpusMap, compute_map, current_map, label_text, save_map

__all__ = ["MapShelf", "attach_map", "map_of_snapshot"]


class MapShelf:
    """The map of the generation last asked about; a map of other data (from before an
    add or remove) is never handed out."""

    def __init__(self) -> None:
        self._held: tuple[int, CorpusMap | None] | None = None  # (generation, its map)

    def current(self, directory: IndexDirectory, manifest: Manifest) -> CorpusMap | None:
        if self._held is None or self._held[0] != manifest.generation:
            found = current_map(directory.files_dir(manifest), manifest.files)
            self._held = (manifest.generation, found)
        return self._held[1]

    def compute(self, directory: IndexDirectory,
                snapshot: Callable[[], AbstractContextManager[View]], *,
                wait: float | None = DEFAULT_WAIT) -> CorpusMap | None:
        """Compute the map of a `snapshot` of the index and store it as the next
        generation; None, storing nothing, if the index changed meanwhile. Only the
        snapshot and the commit hold anything, so queries and writes go on meanwhile."""
        with snapshot() as view:
            manifest, keys = view.manifest, view.keys()
            vectors, papers = view.vectors(keys), view.papers(keys)
        corpus_map = map_of_snapshot(manifest, keys, vectors, papers)
        published = attach_map(directory, manifest, corpus_map, wait=wait)
        if published is None:
            return None
        with snapshot() as view:  # loads the map's generation, or one newer still
            if view.manifest.generation == published.generation:
                self._held = (published.generation, corpus_map)
        return corpus_map


def map_of_snapshot(manifest: Manifest, keys: NDArray[np.int64],
                    vectors: NDArray[np.float32], papers: Mapping[int, Paper]) -> CorpusMap:
    """The map of a snapshot's papers, tagged with the data files it was computed from."""
    source = {name: str(entry["sha256"]) for name, entry in manifest.files.items()
              if name != MAP_FILE}
    texts = [label_text(papers[int(key)]) for key in keys]
    return compute_map(keys, vectors, texts, source)


def attach_map(directory: IndexDirectory, manifest: Manifest, corpus_map: CorpusMap, *,
               wait: float | None = DEFAULT_WAIT) -> Manifest | None:
    """Publish `manifest`'s data with `corpus_map` as the next generation; returns its
    manifest, or None (writing nothing) if the index changed since `manifest`.

    The data files are shared with the current generation, so this costs the map file
    and one checksum pass. Build, add and remove never carry a map over: a generation's
    map always describes that generation's papers.
    """
    with directory.write(replace=True, wait=wait) as staging:
        if newest_generation(directory, staging).generation != manifest.generation:
            return None
        directory.link_files(manifest, staging, [n for n in manifest.files if n != MAP_FILE])
        save_map(corpus_map, staging.dir / MAP_FILE)
        return directory.commit(staging, dataclasses.replace(manifest))
