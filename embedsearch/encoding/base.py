"""The encoder backend interface and the registry that maps a backend name to it.

A backend turns one batch of texts into L2-normalised float32 vectors, each text read as
a query or a document with that role's prompt before it. `torch` runs the model through
sentence-transformers and is the reference; `cuda` is the same on a GPU in float16; the
exported backends run a local ONNX export of the same model. A new backend is one module here with a
`Backend` subclass decorated by `register_backend`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from ..registry import ClassRegistry
from .models import ModelSpec
from .prompts import Role

__all__ = ["Backend", "backend_class", "backend_names", "register_backend"]

_REGISTRY: ClassRegistry[Backend] = ClassRegistry("encoder backend", "name")


def register_backend(name: str) -> Callable[[type[Backend]], type[Backend]]:
    """Class decorator: make the class selectable as `--backend name`."""
    return _REGISTRY.register(name)


def backend_names() -> tuple[str, ...]:
    return _REGISTRY.names()


def backend_class(name: str) -> type[Backend]:
    try:
        return _REGISTRY.get(name)
    except LookupError as exc:
        raise ModelError(f"{exc}; or auto") from None


class Backend(ABC):
    """One way of running a model; built once, then called batch by batch."""

    name: ClassVar[str]
    #: Batch size that measured fastest for this backend on these machines.
    batch_size: ClassVar[int] = 32
    #: Whether a text's vector is the same alone and in a batch (up to padding's
    #: rounding). A backend whose vectors depend on their batch makes a query's answer
    #: depend on the queries it is batched with: `auto` never picks one, and its queries
    #: are encoded one per call (see `Encoder.encode_queries`).
    batch_invariant: ClassVar[bool] = True

    def __init__(self, spec: ModelSpec, *, cache_root: Path, threads: int) -> None:
        self.spec = spec
        self.cache_root = cache_root
        self.threads = threads

    def preferred_batch_size(self) -> int:
        """Texts per batch when the user names none (a GPU sizes it to its free memory)."""
        return self.batch_size

    @property
    @abstractmethod
    def dim(self) -> int:
        """Length of the vectors."""

    @property
    @abstractmethod
    def max_seq_length(self) -> int:
        """Tokens read per text; longer texts are cut."""

    @abstractmethod
    def encode_batch(self, texts: Sequence[str], *, role: Role = "document",
                     prompt: str = "") -> NDArray[np.float32]:
        """Unit vectors of `texts`, one row each, as sentence-transformers'
        `encode_query` (role "query") or `encode_document` would give them with `prompt`."""


def normalise(vectors: NDArray[np.floating]) -> NDArray[np.float32]:
    """Rows scaled to unit length, as float32 (low-precision backends drift slightly)."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.ascontiguousarray(out / np.maximum(norms, 1e-12))
