"""Encoding: texts into unit vectors with a sentence-transformers model.

`Encoder` picks a backend (torch, onnx, onnx-int8, openvino, openvino-bf16,
openvino-int8, or auto), keeps an on-disk embedding cache, and resolves models
(`resolve_model`) to a directory and a fingerprint before anything heavy is imported.
Backends register themselves in `base`; each lives in its own module and imports its
runtime only when first used.
"""

from __future__ import annotations

from . import onnx_backend, openvino_backend, torch_backend  # noqa: F401  (register backends)
from .base import Backend, backend_names, register_backend
from .cache import CacheStats, EmbeddingCache, default_cache_dir
from .encoder import DEFAULT_BACKEND, Encoder, index_encoder
from .executors import Executor, LocalExecutor, RayExecutor
from .models import BUNDLED_MODEL, ModelSpec, resolve_model

__all__ = [
    "BUNDLED_MODEL",
    "DEFAULT_BACKEND",
    "Backend",
    "CacheStats",
    "EmbeddingCache",
    "Encoder",
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "index_encoder",
    "ModelSpec",
    "backend_names",
    "default_cache_dir",
    "register_backend",
    "resolve_model",
]
