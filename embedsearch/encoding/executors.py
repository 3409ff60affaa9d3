"""Where an `Encoder` computes the vectors its cache lacks: here, or on a Ray cluster.

The encoder asks its embedding cache first and hands only the misses, longest first, to
an executor, which yields `(rows, vectors)` pieces as they are done, in any order; the
encoder puts each piece in place by row and caches it. So a text encoded once is never
encoded again, whichever worker encoded it, and the vectors come back in input order.

Here: the interface and `LocalExecutor`, the backend called batch by batch in this
process. `ray_executor.RayExecutor` spreads the texts over a pool of Ray Data actors.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from .models import ModelSpec
from .prompts import Prompts

__all__ = ["DocumentEncoder", "Executor", "LocalExecutor", "Piece"]

#: Row numbers into the texts given to `Executor.run`, and their vectors.
Piece = tuple[NDArray[np.int64], NDArray[np.float32]]
#: Texts per cache transaction in the local loop: an interrupted build loses seconds.
_CHUNK = 256


class DocumentEncoder(Protocol):
    """What an executor needs of the encoder it works for (an `Encoder` is one)."""

    @property
    def spec(self) -> ModelSpec: ...

    @property
    def backend(self) -> str: ...

    @property
    def batch_size(self) -> int: ...

    @property
    def cache_root(self) -> Path: ...

    @property
    def prompts(self) -> Prompts: ...

    def encode_document_batch(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


class Executor(ABC):
    """Computes vectors of texts for an encoder; the encoder owns the cache."""

    @abstractmethod
    def run(self, encoder: DocumentEncoder, texts: Sequence[str]) -> Iterator[Piece]:
        """Vectors of `texts` by `encoder`'s model and backend, piece by piece, until every
        row is covered once."""


class LocalExecutor(Executor):
    """The encoder's own backend, batch by batch, in the order given."""

    def run(self, encoder: DocumentEncoder, texts: Sequence[str]) -> Iterator[Piece]:
        for chunk in range(0, len(texts), _CHUNK):
            stop = min(chunk + _CHUNK, len(texts))
            for start in range(chunk, stop, encoder.batch_size):
                end = min(start + encoder.batch_size, stop)
                yield (np.arange(start, end, dtype=np.int64),
                       encoder.encode_document_batch(texts[start:end]))
