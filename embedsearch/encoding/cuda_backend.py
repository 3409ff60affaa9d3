"""The `cuda` backend: the torch reference on an NVIDIA GPU, in float16.

Vectors agree with the CPU's float32 ones to a cosine of about 0.9999 (float16 keeps 11
bits of mantissa, and each layer's layer norm keeps values in its range). A batch is
sized to the GPU's free memory, and one that still runs out of it is split in halves
and tried again, never a crash. Without a GPU the backend runs on the CPU in float32,
with a warning: an index built on a GPU cluster is then still queried on a laptop.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .base import register_backend
from .prompts import Role
from .torch_backend import TorchBackend

__all__ = ["CudaBackend", "cuda_batch_size", "cuda_devices", "encode_in_pieces"]

_log = logging.getLogger("embedsearch")
#: Share of the GPU's free memory one batch may take; the rest absorbs the allocator's
#: fragmentation and whatever else shares the card.
MEMORY_SHARE = 0.5
#: Past 512 texts a GPU is busy enough for models of this size, and longer batches of
#: longest-first texts only pad more; below 8 the launch overhead dominates.
MIN_BATCH, MAX_BATCH = 8, 512


def cuda_devices() -> int:
    """How many CUDA GPUs torch can use here.

    Without an NVIDIA driver loaded, 0 without importing torch (a second or two on a
    laptop's every build); once torch is imported its own discovery answers.
    """
    driver = os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidiactl")
    if "torch" not in sys.modules and not driver:
        return 0
    try:
        import torch

        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except Exception:  # a broken CUDA install is no GPU, not a crash
        return 0


def cuda_batch_size(free_bytes: int, max_seq_length: int, hidden_size: int) -> int:
    """Texts per batch that fit in `free_bytes` of GPU memory.

    In float16 inference one layer's activations are alive at a time: about 16 vectors
    of `hidden_size` per token at the widest point (query, key, value, output and the
    4x feed-forward, with their temporaries), 2 bytes each, plus the attention scores,
    heads (hidden / 64) x tokens per token. A batch may take MEMORY_SHARE of the free
    memory, within [MIN_BATCH, MAX_BATCH]; a batch that still does not fit is split.
    """
    tokens = max(1, max_seq_length)
    per_text = tokens * (16 * hidden_size * 2 + (hidden_size // 64) * tokens * 2)
    fits = int(free_bytes * MEMORY_SHARE) // max(1, per_text)
    return max(MIN_BATCH, min(MAX_BATCH, fits))


def encode_in_pieces(encode: Callable[[Sequence[str]], NDArray[np.float32]],
                     texts: Sequence[str], limit: int,
                     out_of_memory: type[BaseException],
                     on_split: Callable[[int], None] = lambda size: None
                     ) -> tuple[NDArray[np.float32], int]:
    """`encode` over `texts` in batches of at most `limit`; a batch that raises
    `out_of_memory` is halved and tried again. Returns the vectors and the limit that
    held, which the caller keeps for the next call (memory does not come back by
    itself). One text that does not fit is a ModelError."""
    pieces: list[NDArray[np.float32]] = []
    start = 0
    while start < len(texts):
        size = min(limit, len(texts) - start)
        try:
            pieces.append(encode(texts[start:start + size]))
        except out_of_memory:
            if size == 1:
                raise ModelError("a single text does not fit in the GPU's free memory; "
                                 "free the GPU or use --backend torch") from None
            limit = size // 2
            on_split(limit)
            continue
        start += size
    return np.concatenate(pieces) if pieces else np.zeros((0, 0), np.float32), limit


@register_backend("cuda")
class CudaBackend(TorchBackend):
    """sentence-transformers on the first CUDA GPU, float16, batches sized to its memory."""

    _limit: int = MAX_BATCH
    _warned: bool = False

    def _device(self) -> str:
        return "cuda" if cuda_devices() else "cpu"

    def _prepared(self, model: Any) -> Any:
        return model.half() if str(model.device).startswith("cuda") else model

    @property
    def on_gpu(self) -> bool:
        return str(self.model.device).startswith("cuda")

    def preferred_batch_size(self) -> int:
        if not self.on_gpu:
            return TorchBackend.batch_size
        import torch

        free, _ = torch.cuda.mem_get_info()
        config = getattr(self.model[0], "auto_model", None)
        hidden = int(getattr(getattr(config, "config", None), "hidden_size", 0) or self.dim)
        return cuda_batch_size(int(free), self.max_seq_length, hidden)

    def encode_batch(self, texts: Sequence[str], *, role: Role = "document",
                     prompt: str = "") -> NDArray[np.float32]:
        if not self.on_gpu:
            # Said when texts are encoded here, not when the model loads: a Ray driver
            # loads it only to know its vectors' size, and its actors have the GPUs.
            if not self._warned:
                _log.warning("no CUDA GPU is visible to torch (is a CUDA build of torch "
                             "installed? see docs/explanation/performance.md, 'Encoding on a "
                             "GPU'); the cuda backend runs on the CPU in float32")
                self._warned = True
            return super().encode_batch(texts, role=role, prompt=prompt)
        import torch

        def run(batch: Sequence[str]) -> NDArray[np.float32]:
            return TorchBackend.encode_batch(self, batch, role=role, prompt=prompt)

        def split(size: int) -> None:
            torch.cuda.empty_cache()
            _log.warning("the GPU ran out of memory; batches of at most %d texts from now",
                         size)

        vectors, self._limit = encode_in_pieces(run, list(texts), self._limit,
                                                torch.cuda.OutOfMemoryError, split)
        return vectors
