"""Tokenizing for the exported backends: the model's own fast tokenizer, padded per batch."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Tokens"]


class Tokens:
    """Turns a batch of texts into the int64 arrays a transformer graph takes."""

    def __init__(self, tokenizer: Path, max_length: int, inputs: Sequence[str],
                 lowercase: bool = False) -> None:
        from tokenizers import Tokenizer

        self._tokenizer: Any = Tokenizer.from_file(str(tokenizer))
        # tokenizer.json files often carry fixed padding (128 for MiniLM): pad per batch.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length)
        self._inputs = tuple(inputs)
        self._lowercase = lowercase

    def __call__(self, texts: Sequence[str]) -> dict[str, NDArray[np.int64]]:
        batch = [text.lower() for text in texts] if self._lowercase else list(texts)
        encodings = self._tokenizer.encode_batch(batch)
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return {name: arrays[name] for name in self._inputs}
