"""What the encoding pipeline's settings are worth, for the default backend.

Length-sorted batches against batches in corpus order, each batch size, and how much of
the time tokenizing takes: measured on the same papers in one run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..devset import DevSet
from ..encoding import Encoder
from ..papers import embedding_text
from .report import Table

__all__ = ["pipeline_table"]

BATCH_SIZES = (8, 16, 32, 64, 128)


def _rate(encoder: Encoder, texts: Sequence[str], batch: int, ordered: bool) -> float:
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i])) if ordered else \
        list(range(len(texts)))
    start = time.perf_counter()
    for offset in range(0, len(order), batch):
        encoder._backend.encode_batch([texts[i] for i in order[offset : offset + batch]])
    return len(texts) / (time.perf_counter() - start)


def pipeline_table(devset: DevSet, count: int) -> Table:
    texts = [embedding_text(p) for p in devset.papers[:count]]
    encoder = Encoder(cache=False)
    encoder.encode(texts[:16])
    table = Table(f"Encoding pipeline settings ({encoder.backend}, {len(texts)} papers)",
                  ["setting", "papers/s", "x default"],
                  f"Default: length-sorted batches of {encoder.batch_size}.")
    default = _rate(encoder, texts, encoder.batch_size, ordered=True)
    table.add(setting=f"sorted, batch {encoder.batch_size} (default)",
              **{"papers/s": default, "x default": 1.0})
    unsorted = _rate(encoder, texts, encoder.batch_size, ordered=False)
    table.add(setting=f"corpus order, batch {encoder.batch_size}",
              **{"papers/s": unsorted, "x default": unsorted / default})
    for size in BATCH_SIZES:
        if size != encoder.batch_size:
            rate = _rate(encoder, texts, size, ordered=True)
            table.add(setting=f"sorted, batch {size}",
                      **{"papers/s": rate, "x default": rate / default})
    tokens = getattr(encoder._backend, "_tokens", None)
    if tokens is not None:
        start = time.perf_counter()
        for offset in range(0, len(texts), encoder.batch_size):
            tokens(texts[offset : offset + encoder.batch_size])
        share = (time.perf_counter() - start) * default / len(texts)
        table.add(setting="tokenizing alone (share of default time)",
                  **{"papers/s": len(texts) / (time.perf_counter() - start), "x default": share})
    return table
