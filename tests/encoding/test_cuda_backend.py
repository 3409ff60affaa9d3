"""The GPU backend: picked through torch's own device discovery, batches sized to free
memory and split on out-of-memory, the fall-back to the CPU; on a real GPU, agreement
with the CPU's vectors (skipped, saying so, where torch sees none)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import torch

from embedsearch import ModelError, SearchEngine, read_papers
from embedsearch.encoding import Encoder, resolve_model
from embedsearch.encoding.calibrate import choose_backend
from embedsearch.encoding.cuda_backend import (
    MAX_BATCH,
    MIN_BATCH,
    CudaBackend,
    cuda_batch_size,
    cuda_devices,
    encode_in_pieces,
)
from embedsearch.encoding.torch_backend import TorchBackend
from embedsearch.papers import embedding_text

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(),
                               reason="no CUDA GPU visible to torch on this machine")


@pytest.fixture(scope="module")
def texts(seed_files: list[Path]) -> list[str]:
    return [embedding_text(paper) for paper in read_papers(seed_files)]


def test_auto_picks_cuda_when_torch_reports_a_gpu(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    spec = resolve_model()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert cuda_devices() == 2
    assert choose_backend(spec, tmp_path, 2, texts=10) == "cuda"
    assert choose_backend(spec, tmp_path, 2, texts=None) == "cuda"  # never calibrates
    assert not (tmp_path / "backends.json").exists()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cuda_devices() == 0


def test_a_broken_cuda_install_counts_as_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> bool:
        raise RuntimeError("CUDA driver version is insufficient for CUDA runtime version")

    monkeypatch.setattr(torch.cuda, "is_available", broken)
    assert cuda_devices() == 0


def test_batch_size_follows_free_memory_within_bounds() -> None:
    sizes = [cuda_batch_size(free, 256, 384) for free in (10**6, 2 * 10**9, 8 * 10**9,
                                                          80 * 10**9)]
    assert sizes == sorted(sizes) and sizes[0] == MIN_BATCH and sizes[-1] == MAX_BATCH
    assert MIN_BATCH < sizes[1] < MAX_BATCH
    # Longer inputs and wider models take more memory a text: smaller batches.
    assert cuda_batch_size(2 * 10**9, 512, 1024) < cuda_batch_size(2 * 10**9, 256, 384)


def test_an_out_of_memory_batch_is_split_and_gives_the_same_vectors(texts: list[str]) -> None:
    backend = TorchBackend(resolve_model(), cache_root=Path("."), threads=2)
    whole = backend.encode_batch(texts[:12])
    sizes: list[int] = []

    def small_gpu(batch: list[str]) -> np.ndarray:  # a card that holds 3 texts at a time
        if len(batch) > 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        sizes.append(len(batch))
        return backend.encode_batch(batch)

    splits: list[int] = []
    vectors, limit = encode_in_pieces(small_gpu, texts[:12], 16, torch.cuda.OutOfMemoryError,
                                      splits.append)
    assert limit == 3 and splits == [6, 3] and sum(sizes) == 12
    assert np.allclose(vectors, whole, atol=1e-5)
    # The limit that held is kept: the next call starts there, without failing again.
    again, limit = encode_in_pieces(small_gpu, texts[:5], limit, torch.cuda.OutOfMemoryError)
    assert limit == 3 and np.allclose(again, whole[:5], atol=1e-5)


def test_one_text_that_does_not_fit_is_a_clear_error(texts: list[str]) -> None:
    def no_memory(batch: list[str]) -> np.ndarray:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    with pytest.raises(ModelError, match="single text does not fit"):
        encode_in_pieces(no_memory, texts[:4], 4, torch.cuda.OutOfMemoryError)


def test_without_a_gpu_the_cuda_backend_runs_on_the_cpu_and_says_so(
        texts: list[str], caplog: pytest.LogCaptureFixture) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the fall-back cannot be seen")
    with caplog.at_level(logging.WARNING, logger="embedsearch"):
        encoder = Encoder(backend="cuda", cache=False)
        vectors = encoder.encode_documents(texts[:8])
    assert "no CUDA GPU is visible" in caplog.text
    reference = Encoder(backend="torch", cache=False).encode_documents(texts[:8])
    assert np.allclose(vectors, reference, atol=1e-6)
    assert encoder.batch_size == TorchBackend.batch_size


@needs_gpu
def test_gpu_vectors_agree_with_the_cpu_and_give_the_same_index(
        texts: list[str], seed_files: list[Path], tmp_path: Path) -> None:
    gpu = Encoder(backend="cuda", cache=False)
    assert isinstance(gpu.runtime, CudaBackend) and gpu.runtime.on_gpu
    cosines = np.sum(gpu.encode_documents(texts)
                     * Encoder(backend="torch", cache=False).encode_documents(texts), axis=1)
    assert cosines.min() >= 0.999
    on_gpu = SearchEngine.build_from_files(tmp_path / "gpu", seed_files, backend="cuda")
    on_cpu = SearchEngine.build_from_files(tmp_path / "cpu", seed_files, backend="torch")
    query = "offline preference-based reinforcement learning"
    assert ([hit.paper.id for hit in on_gpu.search(query, k=10, mode="dense")]
            == [hit.paper.id for hit in on_cpu.search(query, k=10, mode="dense")])
