"""What the ONNX Runtime and OpenVINO backends share: the export, tokenizer and batching."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .base import Backend, normalise
from .graph import ExportedModel
from .onnx_export import ensure_export
from .prompts import Role
from .tokens import Tokens, exact_shape

__all__ = ["ExportedBackend"]


class ExportedBackend(Backend):
    """A backend that runs the model's ONNX export (graph `variant`) with some runtime."""

    variant: ClassVar[str] = "fp32"
    # onnx writes the export (torch.onnx) and onnxruntime checks it against torch.
    runtimes: ClassVar[tuple[str, ...]] = ("onnx", "onnxruntime")

    @cached_property
    def export(self) -> ExportedModel:
        return ensure_export(self.spec, self.cache_root, self.variant)

    @cached_property
    def tokens(self) -> Tokens:
        return self.export.tokens(self.shape)

    @staticmethod
    def shape(rows: int, longest: int, max_length: int) -> tuple[int, int]:
        """The (rows, width) a batch is padded to (see `tokens.exact_shape`)."""
        return exact_shape(rows, longest, max_length)

    @cached_property
    def _runner(self) -> Any:
        return self._load()

    @cached_property
    def _pools_prompt(self) -> bool:
        """Whether the model's pooling includes a prompt's tokens (read once: the layout
        is parsed from the model's files)."""
        return self.spec.layout().include_prompt

    @property
    def dim(self) -> int:
        return self.export.dim

    @property
    def max_seq_length(self) -> int:
        return self.export.max_seq_length

    def encode_batch(self, texts: Sequence[str], *, role: Role = "document",
                     prompt: str = "") -> NDArray[np.float32]:
        # sentence-transformers puts the prompt before the text and pools over both,
        # unless the model's pooling leaves the prompt out, which only it can do.
        if prompt and not self._pools_prompt:
            raise ModelError(
                f"model {self.spec.name} pools without its prompt's tokens, which only the "
                "torch and cuda backends reproduce: use --backend torch")
        texts = [prompt + text for text in texts] if prompt else texts
        return normalise(self._run(self._runner, self.tokens(texts))[: len(texts)])

    @abstractmethod
    def _load(self) -> Any:
        """The runtime's compiled model."""

    @abstractmethod
    def _run(self, runner: Any, feeds: dict[str, NDArray[np.int64]]) -> NDArray[np.floating]:
        """The graph's output for one batch."""
