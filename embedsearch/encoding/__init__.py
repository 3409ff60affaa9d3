"""Encoding: texts into unit vectors with a sentence-transformers model.

`Encoder` picks a backend (torch, cuda, onnx, onnx-int8, openvino, openvino-bf16,
openvino-int8, or auto), puts the model's query or document prompt before each text
(`prompts`), keeps an on-disk embedding cache, and resolves models (`resolve_model`) to
a directory and a fingerprint before anything heavy is imported.
Backends register themselves in `base`; each lives in its own module and imports its
runtime only when first used. The exported backends' runtimes are the `fast` extra:
`available_backends` are those installed, and `auto` chooses among them.
"""

from __future__ import annotations

from . import (  # noqa: F401  (register backends)
    cuda_backend,
    onnx_backend,
    openvino_backend,
    torch_backend,
)
from .base import (
    FAST_INSTALL,
    Backend,
    available_backends,
    backend_names,
    missing_runtimes,
    register_backend,
)
from .cache import CacheStats, EmbeddingCache, default_cache_dir
from .encoder import DEFAULT_BACKEND, Encoder, index_encoder
from .executors import Executor, LocalExecutor
from .models import BUNDLED_MODEL, ModelSpec, resolve_model
from .prompts import Prompts
from .ray_executor import RayExecutor

__all__ = [
    "BUNDLED_MODEL",
    "FAST_INSTALL",
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
    "Prompts",
    "available_backends",
    "backend_names",
    "missing_runtimes",
    "default_cache_dir",
    "register_backend",
    "resolve_model",
]
