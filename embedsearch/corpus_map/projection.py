"""The map of a corpus: every paper as a point in 2D, grouped into labelled clusters.

The layout is UMAP over the paper vectors (PCA below `UMAP_MIN_PAPERS`, where a
neighbour graph of 15 neighbours says little and numba's compile time would dominate);
clusters are k-means regions of the layout, so a label names what the eye sees as one
area; labels are the words that characterise a cluster's titles, keywords and abstracts
against the rest of the corpus (class-based TF-IDF). The result is plain data, saved
as one `.npz` file that records the sha256 of the index files it was computed from, so
that a map of other data is recognised as stale.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DependencyError, IndexCorruptError
from ..papers import Paper
from ..text.words import label_words

__all__ = [
    "MAP_FILE",
    "UMAP_MIN_PAPERS",
    "Cluster",
    "CorpusMap",
    "cluster_count",
    "compute_map",
    "current_map",
    "label_text",
    "load_map",
    "save_map",
]

MAP_FILE = "map.npz"
MAP_VERSION = 1
#: Below this many papers the layout is PCA: UMAP's 15-neighbour graph would span most
#: of the corpus, and numba's ~20 s of compilation would outweigh the work.
UMAP_MIN_PAPERS = 200


@dataclass(frozen=True)
class Cluster:
    """One labelled region of the map: its words, its centre and how many papers."""

    id: int
    words: tuple[str, ...]
    x: float
    y: float
    size: int

    @property
    def label(self) -> str:
        return " · ".join(self.words)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "words": list(self.words),
                "x": self.x, "y": self.y, "size": self.size}


@dataclass(frozen=True)
class CorpusMap:
    """Point i is the paper stored under `keys[i]`, at `xy[i]` (in [0, 1]²), in cluster
    `cluster[i]`; `source` names the index files (name → sha256) it was computed from."""

    keys: NDArray[np.int64]
    xy: NDArray[np.float32]
    cluster: NDArray[np.int32]
    clusters: tuple[Cluster, ...]
    method: str
    source: dict[str, str]

    def __len__(self) -> int:
        return len(self.keys)

    def is_current(self, files: Mapping[str, Mapping[str, Any]]) -> bool:
        """True if `files` (a manifest's name → {sha256}) hold exactly the source data."""
        current = {name: str(entry["sha256"]) for name, entry in files.items()
                   if name != MAP_FILE}
        return current == self.source


def label_text(paper: Paper) -> str:
    """What a paper contributes to its cluster's label: title, keywords and abstract."""
    title = "" if paper.title_derived else paper.title
    return " ".join(part for part in (title, " ".join(paper.keywords), paper.abstract) if part)


def _layout(vectors: NDArray[np.float32]) -> tuple[NDArray[np.float32], str]:
    """2D coordinates of `vectors`, and the method's name."""
    count = len(vectors)
    if count < 3:
        return np.zeros((count, 2), np.float32) + 0.5, "none"
    if count < UMAP_MIN_PAPERS:
        from sklearn.decomposition import PCA

        return PCA(n_components=2).fit_transform(vectors).astype(np.float32), "pca"
    try:
        import umap
    except ImportError:
        raise DependencyError("the map of more than a few hundred papers is a UMAP layout: "
                              "pip install 'embedsearch[server]' (or umap-learn)") from None

    # Unit vectors: euclidean neighbours are cosine neighbours, and cheaper to find.
    # No random_state: fixing one makes UMAP single-threaded.
    reducer = umap.UMAP(n_neighbors=15, min_dist=0.1, metric="euclidean", low_memory=True)
    return np.asarray(reducer.fit_transform(vectors), dtype=np.float32), "umap"


def _normalise(xy: NDArray[np.float32]) -> NDArray[np.float32]:
    """Scale into [0, 1]² keeping the aspect ratio, so distances stay comparable."""
    if not len(xy):
        return xy
    low = xy.min(axis=0)
    span = float((xy.max(axis=0) - low).max()) or 1.0
    scaled: NDArray[np.float32] = ((xy - low) / span).astype(np.float32)
    return scaled


def cluster_count(count: int) -> int:
    """About √n / 2 clusters, 2 to 30: enough areas to orient by, few enough to read."""
    return max(1, min(count, max(2, min(30, round(math.sqrt(count) / 2)))))


def _clusters(xy: NDArray[np.float32]) -> NDArray[np.int32]:
    if len(xy) < 2:
        return np.zeros(len(xy), np.int32)
    from sklearn.cluster import KMeans

    model = KMeans(n_clusters=cluster_count(len(xy)), n_init=3, random_state=0)
    return np.asarray(model.fit_predict(xy), dtype=np.int32)


def compute_map(keys: NDArray[np.int64], vectors: NDArray[np.float32], texts: Sequence[str],
                source: Mapping[str, str]) -> CorpusMap:
    """The map of the papers `keys` with unit `vectors` and label `texts` (row-aligned);
    `source` names the index files (name → sha256) the inputs came from."""
    if not len(keys) == len(vectors) == len(texts):
        raise ValueError("keys, vectors and texts must have one row per paper")
    xy, method = _layout(np.ascontiguousarray(vectors, dtype=np.float32))
    xy = _normalise(xy)
    cluster = _clusters(xy)
    count = int(cluster.max()) + 1 if len(cluster) else 0
    labels = label_words(texts, cluster, count) if count else []
    clusters = []
    for number in range(count):
        members = xy[cluster == number]
        centre = np.median(members, axis=0) if len(members) else np.full(2, 0.5)
        clusters.append(Cluster(number, labels[number], round(float(centre[0]), 4),
                                round(float(centre[1]), 4), len(members)))
    return CorpusMap(np.asarray(keys, dtype=np.int64), xy, cluster, tuple(clusters), method,
                     dict(source))


def save_map(corpus_map: CorpusMap, path: Path) -> None:
    """Write `corpus_map` to `path` (an .npz without pickles)."""
    meta = {"version": MAP_VERSION, "method": corpus_map.method, "source": corpus_map.source,
            "clusters": [cluster.to_dict() for cluster in corpus_map.clusters]}
    with open(path, "wb") as handle:
        np.savez(handle, keys=corpus_map.keys, xy=corpus_map.xy, cluster=corpus_map.cluster,
                 meta=np.array(json.dumps(meta)))


def load_map(path: Path) -> CorpusMap:
    """Read what `save_map` wrote; IndexCorruptError if it is not such a file."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            keys, xy, cluster = data["keys"], data["xy"], data["cluster"]
        if meta.get("version") != MAP_VERSION or not len(keys) == len(xy) == len(cluster):
            raise ValueError("unexpected layout")
        clusters = tuple(Cluster(int(c["id"]), tuple(c["words"]), float(c["x"]), float(c["y"]),
                                 int(c["size"])) for c in meta["clusters"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexCorruptError(f"{path} is not a corpus map this embedsearch reads ({exc}); "
                                "`embedsearch map` computes a new one") from None
    return CorpusMap(keys.astype(np.int64), xy.astype(np.float32), cluster.astype(np.int32),
                     clusters, str(meta["method"]), {str(k): str(v) for k, v in
                                                     meta["source"].items()})


def current_map(folder: Path, files: Mapping[str, Mapping[str, Any]]) -> CorpusMap | None:
    """The map in `folder` if there is one, readable, computed from exactly `files` (a
    manifest's name → {sha256}); None otherwise, so that nothing stale is ever used."""
    if MAP_FILE not in files:
        return None
    try:
        found = load_map(folder / MAP_FILE)
    except IndexCorruptError:  # a layout this version does not read: compute a new one
        return None
    return found if found.is_current(files) else None
