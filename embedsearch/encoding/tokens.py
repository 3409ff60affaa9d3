"""Tokenizing for the exported backends: the model's own fast tokenizer, a batch padded
to its longest text (`exact_shape`) or, for OpenVINO, to one of a few shapes
(`padded_shape`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Shape", "Tokens", "exact_shape", "padded_shape"]

#: (texts, longest text's tokens, model's max length) -> (rows, width) of the batch.
Shape = Callable[[int, int, int], tuple[int, int]]


def exact_shape(rows: int, longest: int, max_length: int) -> tuple[int, int]:
    """A batch as it is, padded to its longest text: onnxruntime keeps no buffers per
    shape, and its int8 graph is quantised dynamically, so padding would move a text's
    vector (cosine 0.988 at worst to unpadded, measured on 200 dev texts)."""
    return rows, longest


def padded_shape(rows: int, longest: int, max_length: int) -> tuple[int, int]:
    """A batch padded to one of a few shapes, for OpenVINO.

    OpenVINO's CPU plugin keeps the buffers and kernels it made for every input shape
    it has run, and making them for a new one is slow. Measured on all-MiniLM-L6-v2
    (int8, AMD EPYC): 4.3 MB more resident memory for each new query length, and a
    server's evidence sentences (a new number of sentences of a new length almost
    every query) grew it by 1.3 GB over 400 queries and took 32 ms a dense query
    instead of about 5. Widths are rounded up to a multiple of 8 (to 64 tokens), then
    of 16 (to 128), 32 (to 256) and 64: 20 widths for a 512-token model, at most
    12.5% more tokens past 64. Rows are rounded up to 1, 2, 4, 8, 12, 16, 24, 32, 48,
    64, ... Padded tokens are masked and padded rows dropped, so the vectors stay the
    same (int8 graph, quantised statically: cosine 0.99974 at worst, 200 dev texts).
    """
    step = 8 if longest <= 64 else 16 if longest <= 128 else 32 if longest <= 256 else 64
    width = min(max_length, -(-longest // step) * step)  # texts are truncated to max_length
    power = 1 << (rows - 1).bit_length()  # the power of two at or above rows
    return (power * 3 // 4 if rows > 8 and rows <= power * 3 // 4 else power), width


class Tokens:
    """Turns a batch of texts into the int64 arrays a transformer graph takes; rows past
    the texts (a padded shape) repeat the first text, whose output the caller drops."""

    def __init__(self, tokenizer: Path, max_length: int, inputs: Sequence[str],
                 lowercase: bool = False, shape: Shape = exact_shape) -> None:
        from tokenizers import Tokenizer

        self._tokenizer: Any = Tokenizer.from_file(str(tokenizer))
        # tokenizer.json files often carry fixed padding (128 for MiniLM): pad per batch.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length)
        self._inputs = tuple(inputs)
        self._lowercase = lowercase
        self._max_length, self._shape = max_length, shape

    def __call__(self, texts: Sequence[str]) -> dict[str, NDArray[np.int64]]:
        batch = [text.lower() for text in texts] if self._lowercase else list(texts)
        encodings = self._tokenizer.encode_batch(batch)
        rows, width = self._shape(len(encodings), max(len(e.ids) for e in encodings),
                                  self._max_length)
        ids = np.zeros((rows, width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        ids[len(encodings):], mask[len(encodings):] = ids[0], mask[0]
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return {name: arrays[name] for name in self._inputs}
