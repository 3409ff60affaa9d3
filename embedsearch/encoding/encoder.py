"""`Encoder`: texts in, unit vectors out, through a chosen backend and the embedding cache.

Bulk encoding sorts texts by length so each batch pads little, asks the cache first and
stores what it computes batch by batch. Queries skip the cache: one short text costs a
millisecond or two to encode, less than keeping the cache warm on a read path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import IndexIncompatibleError
from ..progress import progress_bar
from .base import Backend, backend_class
from .cache import DEFAULT_MAX_BYTES, EmbeddingCache, default_cache_dir
from .calibrate import choose_backend
from .executors import Executor, LocalExecutor
from .models import ModelSpec, resolve_model

__all__ = ["DEFAULT_BACKEND", "Encoder", "index_encoder"]

DEFAULT_BACKEND = "auto"
#: Texts per cache transaction: small enough that an interrupted build loses seconds.
_CHUNK = 256


class Encoder:
    """Turns texts into L2-normalised float32 vectors (cosine = inner product).

    `backend` is torch (the reference), onnx, onnx-int8, openvino, openvino-bf16,
    openvino-int8, or auto: the fastest that agrees with torch on this machine. Models
    load on first use.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | ModelSpec | None = None,
        *,
        backend: str = DEFAULT_BACKEND,
        batch_size: int | None = None,
        threads: int | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        cache: bool = True,
        max_cache_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.spec = model if isinstance(model, ModelSpec) else resolve_model(model)
        self.cache_root = Path(cache_dir) if cache_dir else default_cache_dir()
        self.threads = threads or os.cpu_count() or 1
        name = backend
        if backend == "auto":
            name = choose_backend(self.spec, self.cache_root, self.threads)
        self._backend: Backend = backend_class(name)(self.spec, cache_root=self.cache_root,
                                                     threads=self.threads)
        self.batch_size = batch_size or self._backend.batch_size
        self._use_cache = cache
        self._max_cache_bytes = max_cache_bytes
        self._cache: EmbeddingCache | None = None

    @property
    def backend(self) -> str:
        """The concrete backend in use (never 'auto')."""
        return self._backend.name

    @property
    def dim(self) -> int:
        return self._backend.dim

    @property
    def max_seq_length(self) -> int:
        return self._backend.max_seq_length

    def record(self) -> dict[str, Any]:
        """How an index manifest names this encoder; a query encoder must match it."""
        return {"name": self.spec.name, "fingerprint": self.spec.fingerprint,
                "backend": self.backend, "dim": self.dim, "max_seq_length": self.max_seq_length}

    def _namespace(self) -> str:
        """What a cached vector depends on besides its text (known without loading)."""
        return f"{self.spec.fingerprint}:{self.backend}:{self.spec.layout().max_seq_length}"

    def _embedding_cache(self) -> EmbeddingCache | None:
        if self._use_cache and self._cache is None:
            self._cache = EmbeddingCache(self.cache_root, max_bytes=self._max_cache_bytes)
        return self._cache

    def encode_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of a few query texts, without the cache."""
        return self._backend.encode_batch(list(texts))

    def encode(self, texts: Sequence[str], *, progress: bool = False,
               executor: Executor | None = None) -> NDArray[np.float32]:
        """Vectors of `texts`, one row each: cached ones read, the rest computed (by
        `executor`, default this process) and cached as they arrive."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        cache = self._embedding_cache()
        namespace = self._namespace()
        found = cache.get(namespace, texts, self.dim) if cache else {}
        for position, vector in found.items():
            out[position] = vector
        missing = [i for i in range(len(texts)) if i not in found]
        missing.sort(key=lambda i: -len(texts[i]))  # similar lengths batch with little padding
        bar = progress_bar(len(texts), "Encoding", done=len(found), enabled=progress)
        pending: list[int] = []
        pieces = (executor or LocalExecutor()).run(self, [texts[i] for i in missing])
        for rows, vectors in pieces:
            batch = [missing[row] for row in rows.tolist()]
            out[batch] = vectors
            bar.update(len(batch))
            pending.extend(batch)
            if len(pending) >= _CHUNK:
                if cache:
                    cache.put(namespace, [texts[i] for i in pending], out[pending])
                pending = []
        if cache and pending:
            cache.put(namespace, [texts[i] for i in pending], out[pending])
        bar.close()
        return out

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def index_encoder(built: Mapping[str, Any], index: Path, *,
                  model: str | ModelSpec | None = None, backend: str | None = None,
                  cache_dir: str | os.PathLike[str] | None = None,
                  cache: bool = True) -> Encoder:
    """The query encoder of the index at `index`, which `built` (its manifest's model
    record) encoded: that model and backend unless others are named, and those refused
    unless their vectors are comparable (same fingerprint, same backend)."""
    name = model or built["name"]
    spec = name if isinstance(name, ModelSpec) else resolve_model(name)
    backend = backend or str(built["backend"])
    if spec.fingerprint != built["fingerprint"] or backend != built["backend"]:
        raise IndexIncompatibleError(
            f"index {index} was built with {built['name']} on backend {built['backend']} "
            f"(fingerprint {str(built['fingerprint'])[:12]}), but the query encoder is "
            f"{spec.short()} on backend {backend}; their vectors are not comparable: omit "
            "--model/--backend to use the index's own encoder, or rebuild the index with "
            "this one")
    return Encoder(spec, backend=backend, cache_dir=cache_dir, cache=cache)
