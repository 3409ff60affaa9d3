"""Encoding on a GPU against the CPU default, side by side on the dev papers.

The GPU (the cuda backend: float16, batches sized to free memory) encodes every paper;
the CPU default (what `auto` picks without a GPU, measured once) encodes a sample, as
it would take hours for all of them; papers/s of each, their ratio, the cosine of the
GPU's vectors to the CPU's on the sample, and the GPU's peak memory. Without a GPU the
table says so and measures nothing.
"""

from __future__ import annotations

import os
import time

import numpy as np

from ..encoding import Encoder, default_cache_dir
from ..encoding.calibrate import cpu_backend
from ..encoding.cuda_backend import cuda_devices
from ..evaluation.devset import DevSet
from ..papers import embedding_text
from .report import Table

__all__ = ["gpu_table"]


def _rate(encoder: Encoder, texts: list[str]) -> tuple[np.ndarray, float]:
    encoder.encode_documents(texts[:64])  # load, first kernels
    start = time.perf_counter()
    vectors = encoder.encode_documents(texts)
    return vectors, len(texts) / (time.perf_counter() - start)


def gpu_table(devset: DevSet, papers: int, cpu_papers: int) -> Table:
    texts = [embedding_text(paper) for paper in devset.papers[: papers or None]]
    table = Table(f"Encoding {len(texts)} dev papers on a GPU against the CPU default",
                  ["pipeline", "device", "papers", "papers/s", "x CPU default", "min cos",
                   "peak GPU MB"])
    if not cuda_devices():
        table.note = "No CUDA GPU visible to torch: nothing measured."
        return table
    import torch

    gpu = Encoder(backend="cuda", cache=False)
    torch.cuda.reset_peak_memory_stats()
    gpu_vectors, gpu_rate = _rate(gpu, texts)
    peak = torch.cuda.max_memory_allocated() / 1e6
    name = cpu_backend(gpu.spec, default_cache_dir(), os.cpu_count() or 1, cpu_papers)
    sample = texts[:cpu_papers]
    cpu_vectors, cpu_rate = _rate(Encoder(backend=name, cache=False), sample)
    cosines = np.sum(gpu_vectors[: len(sample)] * cpu_vectors, axis=1)
    table.note = (f"{torch.cuda.get_device_name(0)}; batch {gpu.batch_size}; CPU: "
                  f"{os.cpu_count()} cores, its papers are the first {len(sample)}.")
    table.add(pipeline="cuda (float16)", device="GPU", papers=len(texts),
              **{"papers/s": gpu_rate, "x CPU default": gpu_rate / cpu_rate,
                 "min cos": float(cosines.min()), "peak GPU MB": peak})
    table.add(pipeline=f"{name} (CPU default)", device="CPU", papers=len(sample),
              **{"papers/s": cpu_rate, "x CPU default": 1.0})
    return table
