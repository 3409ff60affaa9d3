"""Quantising the fp32 export to int8: the two recipes the int8 backends run.

- `onnx-int8`: onnxruntime's dynamic quantisation. Weights int8 per output channel
  (per-tensor scales cost too much agreement), activations scaled per batch at run time.
- `openvino-int8`: NNCF's static quantisation for OpenVINO. Activation ranges are
  calibrated once on the bundled sample abstracts, so every matrix product runs in int8
  (VNNI) with no scaling at run time: ~1.5x `openvino-bf16` on a CPU without AMX.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

from ..errors import DependencyError, ModelError
from .base import FAST_INSTALL
from .tokens import Tokens

__all__ = ["quantize_onnx_dynamic", "quantize_openvino_static"]

_log = logging.getLogger("embedsearch")


@contextmanager
def _quiet(*names: str) -> Iterator[None]:
    """Silence the quantisers' advice and progress logging while they run."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def quantize_onnx_dynamic(source: Path, target: Path) -> None:
    """Write `source`'s dynamic int8 quantisation to the ONNX file `target`."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise DependencyError(f"int8 quantisation needs onnxruntime and onnx ({exc}): "
                              f"{FAST_INSTALL}") from None
    with _quiet(""):  # the root logger: onnxruntime advises static models at WARNING
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8,
                         per_channel=True)


def quantize_openvino_static(source: Path, tokens: Tokens, texts: Sequence[str],
                             target: Path) -> None:
    """Write `source` quantised to int8 for OpenVINO, calibrated on `texts`, as the IR
    `target` (an .xml file, with its weights in the .bin beside it)."""
    try:
        import nncf
        import openvino
    except ImportError as exc:
        raise DependencyError(f"the openvino-int8 backend needs nncf and openvino ({exc}): "
                              f"{FAST_INSTALL}") from None
    if not texts:
        raise ModelError("int8 calibration needs sample texts; the bundled sample is missing")
    model = openvino.Core().read_model(str(source))
    _log.info("Quantising the model to int8 for OpenVINO (once, ~15 s)...")
    # One text per calibration item: ranges measured on real tokens, not on padding.
    samples = nncf.Dataset([tokens([text]) for text in texts])
    # NNCF draws its own progress bars on stdout, which belongs to our output (--json).
    with _quiet("nncf"), redirect_stdout(io.StringIO()):
        quantized = nncf.quantize(model, samples, model_type=nncf.ModelType.TRANSFORMER,
                                  subset_size=len(texts))
    openvino.save_model(quantized, str(target))
