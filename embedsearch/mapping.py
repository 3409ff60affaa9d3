"""The corpus map beside an open index: the map of the generation being served, read
once per generation, and a new map computed from a read snapshot of the index (stored
as the next generation by `indexing.attach_map`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from .papers import Paper
from .projection import MAP_FILE, CorpusMap, compute_map, current_map, label_text
from .storage.layout import IndexDirectory, Manifest

__all__ = ["MapShelf", "map_of_snapshot"]


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

    def keep(self, generation: int, corpus_map: CorpusMap) -> None:
        """Remember a map just stored as `generation`, sparing its reading back."""
        self._held = (generation, corpus_map)


def map_of_snapshot(manifest: Manifest, keys: NDArray[np.int64],
                    vectors: NDArray[np.float32], papers: Mapping[int, Paper]) -> CorpusMap:
    """The map of a snapshot's papers, tagged with the data files it was computed from."""
    source = {name: str(entry["sha256"]) for name, entry in manifest.files.items()
              if name != MAP_FILE}
    texts = [label_text(papers[int(key)]) for key in keys]
    return compute_map(keys, vectors, texts, source)
