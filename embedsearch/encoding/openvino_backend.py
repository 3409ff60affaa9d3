"""OpenVINO backends: the fp32 export, the same graph in bfloat16, and its int8 version.

On CPUs with AMX OpenVINO runs the bf16 matrix products on the tile units: several times
the float32 throughput, with vectors that agree with float32 to a cosine of about 0.9999.
Without AMX (AVX512-BF16 only) bf16 gains less, and the statically quantised int8 graph
(see `quantize`), on VNNI, is the fastest: cosine about 0.997 to float32.
"""

from __future__ import annotations

import os
import threading
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..errors import DependencyError
from .base import FAST_INSTALL, register_backend
from .exported import ExportedBackend
from .tokens import padded_shape

__all__ = ["OpenVinoBackend", "OpenVinoBf16Backend", "OpenVinoInt8Backend"]


class _Request:
    """An OpenVINO infer request, which runs one inference at a time (a second one at
    once fails with "Infer Request is busy"): a server's searches and an add encoding in
    another thread take turns. Its output is copied before the next may overwrite it."""

    def __init__(self, request: Any) -> None:
        self.request, self.lock = request, threading.Lock()

    def infer(self, feeds: dict[str, NDArray[np.int64]]) -> NDArray[np.floating]:
        with self.lock:
            return np.array(self.request.infer(feeds)[0], copy=True)


@register_backend("openvino")
class OpenVinoBackend(ExportedBackend):
    precision: ClassVar[str] = "f32"
    runtimes: ClassVar[tuple[str, ...]] = (*ExportedBackend.runtimes, "openvino")

    def _load(self) -> Any:
        try:
            import openvino
        except ImportError as exc:
            raise DependencyError(f"the openvino backends need openvino ({exc}): "
                                  f"{FAST_INSTALL}") from None
        core = openvino.Core()
        # Compiled blobs are cached beside the export so the next start skips compiling;
        # one folder per graph and precision, as OpenVINO 2026.4 reuses an f32 blob for a
        # bf16 request (and crashes on it).
        cache = self.export.folder / f"openvino-cache-{self.variant}-{self.precision}"
        core.set_property({"CACHE_DIR": str(cache)})
        compiled = core.compile_model(str(self.export.graph(self.variant)), "CPU", {
            "INFERENCE_PRECISION_HINT": self.precision,
            "INFERENCE_NUM_THREADS": self.threads,
            "PERFORMANCE_HINT": "LATENCY",
            # OpenVINO pins its threads to the first cores: two processes of one thread
            # each (Ray actors, a server beside a cron add) then share core 0 and run at
            # half speed (measured: 62 papers/s alone, 28.6 each side by side). Pinning
            # only pays when one process owns every core.
            "ENABLE_CPU_PINNING": self.threads >= (os.cpu_count() or 1),
        })
        return _Request(compiled.create_infer_request())

    @staticmethod
    def shape(rows: int, longest: int, max_length: int) -> tuple[int, int]:
        """A few shapes, not every one: OpenVINO keeps buffers per input shape."""
        return padded_shape(rows, longest, max_length)

    def _run(self, runner: Any, feeds: dict[str, NDArray[np.int64]]) -> NDArray[np.floating]:
        request: _Request = runner
        return request.infer(feeds)


@register_backend("openvino-bf16")
class OpenVinoBf16Backend(OpenVinoBackend):
    precision = "bf16"


@register_backend("openvino-int8")
class OpenVinoInt8Backend(OpenVinoBackend):
    # The operations left in float (softmax, layer norm) stay f32: bf16 there gained ~5%.
    variant = "openvino-int8"
    runtimes = (*OpenVinoBackend.runtimes, "nncf")  # NNCF quantises it
