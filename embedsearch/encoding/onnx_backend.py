"""ONNX Runtime backends: the fp32 export, and its int8 dynamic quantisation.

int8 uses the CPU's VNNI instructions for the matrix products; weights are quantised
per output channel, as per-tensor scales cost too much agreement with float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .base import register_backend
from .export import ExportedModel
from .exported import ExportedBackend

__all__ = ["OnnxBackend", "OnnxInt8Backend", "run_graph"]


def _session(exported: ExportedModel, variant: str, threads: int) -> Any:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise ModelError(f"the onnx backends need onnxruntime: {exc}") from None
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
    output = _session(exported, variant, threads).run(None, exported.tokens()(texts))[0]
    return np.asarray(output, dtype=np.float32)


@register_backend("onnx")
class OnnxBackend(ExportedBackend):
    variant = "fp32"

    def _load(self) -> Any:
        return _session(self.export, self.variant, self.threads)

    def _run(self, runner: Any, feeds: dict[str, NDArray[np.int64]]) -> NDArray[np.floating]:
        return np.asarray(runner.run(None, feeds)[0])


@register_backend("onnx-int8")
class OnnxInt8Backend(OnnxBackend):
    variant = "int8"
