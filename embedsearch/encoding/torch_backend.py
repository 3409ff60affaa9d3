"""The reference backend: the model run by sentence-transformers on torch, float32."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .base import Backend, normalise, register_backend
from .models import offline_hub
from .prompts import Role

__all__ = ["TorchBackend"]


@register_backend("torch")
class TorchBackend(Backend):
    """sentence-transformers' own encode: what every other backend is held against."""

    def _device(self) -> str:
        """Where the model runs (`cuda` overrides this)."""
        return "cpu"

    def _prepared(self, model: Any) -> Any:
        """The loaded model made ready for its device (`cuda` halves it)."""
        return model

    @cached_property
    def model(self) -> Any:
        offline_hub()
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:
            raise ModelError(f"cannot import the torch backend's libraries: {exc}") from None
        hf_logging.disable_progress_bar()
        torch.set_num_threads(self.threads)
        device = self._device()
        try:
            model = SentenceTransformer(str(self.spec.path), device=device,
                                        local_files_only=True)
        except Exception as exc:
            raise ModelError(f"cannot load model {self.spec.path}: {exc}") from None
        return self._prepared(model)

    @property
    def dim(self) -> int:
        model = self.model
        # sentence-transformers 6 renamed the method; 5.x only has the old name.
        size = getattr(model, "get_embedding_dimension", model.get_sentence_embedding_dimension)()
        if not size:
            raise ModelError(f"model {self.spec.name} does not report its vector size")
        return int(size)

    @property
    def max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    def encode_batch(self, texts: Sequence[str], *, role: Role = "document",
                     prompt: str = "") -> NDArray[np.float32]:
        # encode_query / encode_document with the prompt given explicitly ("" for none):
        # the configuration's own default prompt never adds itself behind our back, and
        # a model that routes queries and documents differently gets its role.
        model = self.model
        encode = model.encode_query if role == "query" else model.encode_document
        vectors = encode(list(texts), prompt=prompt, batch_size=len(texts),
                         show_progress_bar=False, normalize_embeddings=True,
                         convert_to_numpy=True)
        return normalise(vectors)
