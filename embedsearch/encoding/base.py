"""The encoder backend interface and the registry that maps a backend name to it.

A backend turns one batch of texts into L2-normalised float32 vectors, each text read as
a query or a document with that role's prompt before it. `torch` runs the model through
sentence-transformers and is the reference; `cuda` is the same on a GPU in float16; the
exported backends run a local ONNX export of the same model on runtimes of the `fast`
extra (onnxruntime, OpenVINO), which a core install lacks: `runtimes` names them, named
explicitly such a backend raises `DependencyError` with the pip command, and `auto` only
weighs `available_backends`. A new backend is one module here with a `Backend` subclass
decorated by `register_backend`.
"""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ..errors import DependencyError, ModelError
from ..registry import ClassRegistry
from .models import ModelSpec
from .prompts import Role

__all__ = ["FAST_INSTALL", "Backend", "available_backends", "backend_class", "backend_names",
           "missing_runtimes", "register_backend"]

#: How to install the exported backends' runtimes (the `fast` extra; `.[dev]` brings it).
FAST_INSTALL = 'pip install "embedsearch[fast]"'

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


def missing_runtimes(name: str) -> tuple[str, ...]:
    """The modules backend `name` runs on that are not installed (found without importing
    them: importing OpenVINO alone takes a second)."""
    return tuple(module for module in backend_class(name).runtimes
                 if importlib.util.find_spec(module) is None)


def available_backends() -> tuple[str, ...]:
    """The registered backends whose runtimes are installed: the ones `auto` weighs."""
    return tuple(name for name in backend_names() if not missing_runtimes(name))


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
    #: Modules it runs on beyond the core install (those of the `fast` extra).
    runtimes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, spec: ModelSpec, *, cache_root: Path, threads: int) -> None:
        missing = missing_runtimes(self.name)
        if missing:
            raise DependencyError(
                f"the {self.name} backend needs {' and '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not installed: {FAST_INSTALL}",
                parameter="backend")
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
