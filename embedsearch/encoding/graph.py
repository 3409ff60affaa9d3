"""An exported model on disk, and running its ONNX graph once.

Shared by the exporter (which checks a fresh export against sentence-transformers) and
the runtime backends, so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DependencyError
from .base import FAST_INSTALL
from .tokens import Shape, Tokens, exact_shape

__all__ = ["VARIANTS", "ExportedModel", "onnx_session", "run_graph"]

#: Each graph variant's file in the export folder: the fp32 export and its quantisations.
#: The OpenVINO IR is a folder (its .xml and .bin), so that it appears in one rename.
VARIANTS = {"fp32": "model.onnx", "int8": "model-int8.onnx",
            "openvino-int8": "openvino-int8/model.xml"}


@dataclass(frozen=True)
class ExportedModel:
    """An exported model: its graph files, tokenizer and the pipeline settings."""

    folder: Path
    dim: int
    max_seq_length: int
    lowercase: bool
    inputs: tuple[str, ...]

    @property
    def tokenizer(self) -> Path:
        return self.folder / "tokenizer.json"

    def tokens(self, shape: Shape = exact_shape) -> Tokens:
        """The tokenizer that makes this graph's inputs, a batch padded to `shape`."""
        return Tokens(self.tokenizer, self.max_seq_length, self.inputs, self.lowercase, shape)

    def graph(self, variant: str) -> Path:
        """The graph file of `variant` (see `VARIANTS`)."""
        return self.folder / VARIANTS[variant]



def onnx_session(exported: ExportedModel, variant: str, threads: int) -> Any:
    """An ONNX Runtime session on `exported`'s graph `variant`, on `threads` threads."""
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise DependencyError(f"the onnx backends need onnxruntime ({exc}): {FAST_INSTALL}"
                              ) from None
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(str(exported.graph(variant)), options,
                                providers=["CPUExecutionProvider"])


def run_graph(exported: ExportedModel, variant: str, texts: Sequence[str],
              threads: int) -> NDArray[np.float32]:
    """Run an exported graph once on `texts` (used to check a fresh export)."""
    output = onnx_session(exported, variant, threads).run(None, exported.tokens()(texts))[0]
    return np.asarray(output, dtype=np.float32)
