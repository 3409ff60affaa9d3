"""ONNX Runtime backends: the fp32 export, and its int8 dynamic quantisation.

int8 uses the CPU's VNNI instructions for the matrix products; weights are quantised
per output channel, as per-tensor scales cost too much agreement with float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .base import register_backend
from .exported import ExportedBackend
from .graph import onnx_session

__all__ = ["OnnxBackend", "OnnxInt8Backend"]


@register_backend("onnx")
class OnnxBackend(ExportedBackend):
    variant = "fp32"

    def _load(self) -> Any:
        return onnx_session(self.export, self.variant, self.threads)

    def _run(self, runner: Any, feeds: dict[str, NDArray[np.int64]]) -> NDArray[np.floating]:
        return np.asarray(runner.run(None, feeds)[0])


@register_backend("onnx-int8")
class OnnxInt8Backend(OnnxBackend):
    variant = "int8"
    # Dynamic quantisation scales each call's activations by their own range, so a text
    # alone and in a batch get different vectors (cosine 0.994 on the sample): the
    # server's batched searches answered otherwise than single ones.
    batch_invariant = False
