"""The corpus map as the server offers it: computed in the background, served as JSON.

An index without a current map gets one computed in a background thread (UMAP over 80k
papers takes a few minutes) and stored with the index by the engine, so the next start
finds it. Until then GET /map says `computing`; a map of other data is never served,
and after a write (over HTTP, or by another process) the new generation's map is
computed afresh.
"""

from __future__ import annotations

import gzip
import json
import logging
import threading

import numpy as np

from ..corpus_map.projection import CorpusMap
from ..engine import SearchEngine

__all__ = ["MapService"]

_log = logging.getLogger("embedsearch.server")
#: Attempts when the index keeps changing under a computation (each one is discarded).
_ATTEMPTS = 3


class MapService:
    """The map of one engine's index: its state, its computation, its JSON."""

    def __init__(self, engine: SearchEngine, *, enabled: bool = True) -> None:
        self._engine = engine
        self._enabled = enabled
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._failure = ""
        self._cached: tuple[CorpusMap, bytes, bytes] | None = None

    def start(self) -> None:
        """Compute the map in the background if the index has no current one."""
        if not self._enabled or self._engine.corpus_map() is not None:
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._failure = ""
            self._thread = threading.Thread(target=self._compute, name="corpus-map",
                                            daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Block until a running computation ends (for tests and the CLI)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _compute(self) -> None:
        try:
            for _ in range(_ATTEMPTS):
                if self._engine.compute_map() is not None:
                    return
            self._failure = "the index kept changing while its map was computed"
        except Exception as exc:  # a failed map must not take the server down
            _log.exception("computing the corpus map failed")
            self._failure = f"computing the map failed: {type(exc).__name__}: {exc}"

    def status(self) -> str:
        """ready, computing, failed or off."""
        if self._engine.corpus_map() is not None:
            return "ready"
        if self._thread is not None and self._thread.is_alive():
            return "computing"
        if self._failure:
            return "failed"
        return "computing" if self._enabled else "off"

    def body(self, *, compressed: bool) -> bytes:
        """The GET /map response body (UTF-8 JSON, gzipped if `compressed`)."""
        current = self._engine.corpus_map()
        if current is None:
            self.start()  # another process may have written the index: map the new data
            state = self.status()
            detail = {"failed": self._failure, "off": "the server was started with "
                      "--no-map", "computing": "the map is being computed; ask again "
                      "in a while"}.get(state, "")
            raw = json.dumps({"status": state, "detail": detail}).encode()
            return gzip.compress(raw) if compressed else raw
        cached = self._cached
        if cached is None or cached[0] is not current:
            raw = self._render(current)
            cached = (current, raw, gzip.compress(raw, compresslevel=6))
            self._cached = cached
        return cached[2] if compressed else cached[1]

    def _render(self, corpus_map: CorpusMap) -> bytes:
        papers = self._engine.map_papers(corpus_map)
        xy = np.round(np.nan_to_num(corpus_map.xy.astype(np.float64), nan=0.5), 4)
        data = {
            "status": "ready", "detail": "", "method": corpus_map.method,
            "count": len(corpus_map),
            "ids": [paper.id for paper in papers],
            "titles": [paper.title for paper in papers],
            "x": xy[:, 0].tolist(), "y": xy[:, 1].tolist(),
            "cluster": corpus_map.cluster.tolist(),
            "clusters": [cluster.to_dict() for cluster in corpus_map.clusters],
        }
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
