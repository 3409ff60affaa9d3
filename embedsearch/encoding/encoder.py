"""`Encoder`: texts in, unit vectors out, through a chosen backend and the embedding cache.

Documents and queries are encoded each with its own prompt (`prompts`), as the model's
authors meant. Documents sort by length so each batch pads little, ask the cache first
and store what is computed batch by batch. Queries skip the cache: one short text costs
a millisecond or two to encode, less than keeping the cache warm on a read path.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..errors import IndexIncompatibleError
from ..progress import progress_bar
from .base import Backend, backend_class
from .built import BuiltWith
from .cache import DEFAULT_MAX_BYTES, EmbeddingCache, default_cache_dir
from .calibrate import choose_backend, kept_backend
from .executors import Executor, LocalExecutor
from .models import ModelSpec, resolve_model
from .prompts import Prompts, resolve_prompts

__all__ = ["DEFAULT_BACKEND", "Encoder", "index_encoder"]

DEFAULT_BACKEND = "auto"
#: Texts per cache transaction: small enough that an interrupted build loses seconds.
_CHUNK = 256


class Encoder:
    """Turns texts into L2-normalised float32 vectors (cosine = inner product).

    `backend` is torch (the reference), cuda (torch on a GPU, float16), onnx,
    onnx-int8, openvino, openvino-bf16, openvino-int8, or auto: cuda when torch sees a
    GPU, else the fastest that agrees with torch on this machine, once prepared; a job
    of fewer than `calibrate.PREPARE_AT` texts (`job_size`) runs on the float32 export
    (`calibrate.quick_backend`) rather than wait for that preparation; a build that
    replaces an index (`replacing`: its manifest's model record) keeps that index's
    backend (`calibrate.kept_backend`). `query_prompt` /
    `document_prompt` override the model's own prompts ("" for none). Models load on
    first use.
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
        query_prompt: str | None = None,
        document_prompt: str | None = None,
        job_size: int | None = None,
        replacing: BuiltWith | None = None,
    ) -> None:
        self.spec = model if isinstance(model, ModelSpec) else resolve_model(model)
        self.prompts: Prompts = resolve_prompts(self.spec.name, self.spec.path,
                                                query=query_prompt, document=document_prompt)
        self.cache_root = Path(cache_dir) if cache_dir else default_cache_dir()
        self.threads = threads or os.cpu_count() or 1
        name = backend
        if backend == "auto":
            name = self._auto(job_size, replacing)
        self._backend: Backend = backend_class(name)(self.spec, cache_root=self.cache_root,
                                                     threads=self.threads)
        self._batch_size = batch_size
        self._use_cache = cache
        self._max_cache_bytes = max_cache_bytes
        self._cache: EmbeddingCache | None = None

    def _auto(self, job_size: int | None, replacing: BuiltWith | None) -> str:
        # Only torch knows where a prompt ends for a model that pools without it.
        prompted = bool(self.prompts.query or self.prompts.document)
        if prompted and not self.spec.layout().include_prompt:
            return "torch"
        return (kept_backend(self.spec, replacing)
                or choose_backend(self.spec, self.cache_root, self.threads, job_size))

    @property
    def batch_size(self) -> int:
        """Texts per backend call: as given, else the backend's best."""
        return self._batch_size or self._backend.preferred_batch_size()

    @property
    def backend(self) -> str:
        """The concrete backend in use (never 'auto')."""
        return self._backend.name

    @property
    def runtime(self) -> Backend:
        """The backend object itself, for tools that time its parts (tokenizing)."""
        return self._backend

    @property
    def dim(self) -> int:
        """Length of the vectors this encoder makes."""
        return self._backend.dim

    @property
    def max_seq_length(self) -> int:
        """Tokens of a text the model reads; the rest is cut off, as sentence-transformers
        does."""
        return self._backend.max_seq_length

    def cache_namespace(self) -> str:
        """What a cached document vector depends on besides its text (known without
        loading): the document prompt too, so a vector made under one prompt is never
        served for another (none adds nothing, keeping vectors cached before prompts)."""
        namespace = f"{self.spec.fingerprint}:{self.backend}:{self.spec.layout().max_seq_length}"
        if self.prompts.document:
            digest = hashlib.sha256(self.prompts.document.encode()).hexdigest()[:16]
            namespace += f":document-prompt={digest}"
        return namespace

    def embedding_cache(self) -> EmbeddingCache | None:
        """The embedding cache this encoder reads and fills, or None with the cache off."""
        if self._use_cache and self._cache is None:
            self._cache = EmbeddingCache(self.cache_root, max_bytes=self._max_cache_bytes)
        return self._cache

    def encode_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of a few queries, with the query prompt, in one batch, without the
        cache; one call each on a backend whose vectors depend on their batch, so that a
        query's answer never depends on the queries searched beside it."""
        texts = list(texts)
        if self._backend.batch_invariant or len(texts) < 2:
            return self._backend.encode_batch(texts, role="query", prompt=self.prompts.query)
        return np.concatenate([self._backend.encode_batch([text], role="query",
                                                          prompt=self.prompts.query)
                               for text in texts])

    def encode_document_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of one batch of documents, with the document prompt, without the cache
        (what an executor runs; `encode_documents` is the whole job)."""
        return self._backend.encode_batch(list(texts), role="document",
                                          prompt=self.prompts.document)

    def encode_documents(self, texts: Sequence[str], *, progress: bool = False,
                         executor: Executor | None = None) -> NDArray[np.float32]:
        """Vectors of documents (papers' texts), one row each, with the document prompt:
        cached ones read, the rest computed (by `executor`, default this process) and
        cached as they arrive."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        cache = self.embedding_cache()
        namespace = self.cache_namespace()
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
        """Close the embedding cache's database; the encoder opens it again if used."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def index_encoder(built: BuiltWith, index: Path, *,
                  model: str | ModelSpec | None = None, backend: str | None = None,
                  query_prompt: str | None = None,
                  cache_dir: str | os.PathLike[str] | None = None,
                  cache: bool = True) -> Encoder:
    """The query encoder of the index at `index`, which `built` (its manifest's model
    record) encoded: that model, backend and prompts unless others are named, and those
    refused unless their vectors are comparable (same fingerprint, backend, prompts)."""
    name = model or built.name
    spec = name if isinstance(name, ModelSpec) else resolve_model(name)
    backend = backend or built.backend
    if spec.fingerprint != built.fingerprint or backend != built.backend:
        raise IndexIncompatibleError(
            f"index {index} was built with {built.name} on backend {built.backend} "
            f"(fingerprint {built.fingerprint[:12]}), but the query encoder is "
            f"{spec.short()} on backend {backend}; their vectors are not comparable: omit "
            "--model/--backend to use the index's own encoder, or rebuild the index with "
            "this one")
    prompts = Prompts.from_record(built.prompts)
    if query_prompt is not None and query_prompt != prompts.query:
        raise IndexIncompatibleError(
            f"index {index} was built for queries prefixed {prompts.query!r}, not "
            f"{query_prompt!r}; omit --query-prompt to use the index's own, or rebuild the "
            "index with --query-prompt")
    return Encoder(spec, backend=backend, cache_dir=cache_dir, cache=cache,
                   query_prompt=prompts.query, document_prompt=prompts.document)
