"""What the encoding pipeline's settings are worth, for the default backend.

Length-sorted batches against batches in corpus order, each batch size, and how much of
the time tokenizing takes: measured on the same papers in one run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..encoding import Encoder
from ..evaluation.devset import DevSet
from ..papers import embedding_text
from .report import Table

__all__ = ["pipeline_table"]

BATCH_SIZES = (8, 16, 32, 64, 128)


def _seconds(encoder: Encoder, texts: Sequence[str], batch: int, ordered: bool) -> float:
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i])) if ordered else \
        list(range(len(texts)))
    start = time.perf_counter()
    for offset in range(0, len(order), batch):
        encoder.encode_document_batch([texts[i] for i in order[offset : offset + batch]])
    return time.perf_counter() - start


def pipeline_table(devset: DevSet, count: int, rounds: int = 4) -> Table:
    texts = [embedding_text(p) for p in devset.papers[:count]]
    encoder = Encoder(cache=False)
    encoder.encode_documents(texts[:16])
    default = (f"sorted, batch {encoder.batch_size} (default)", encoder.batch_size, True)
    settings = [default, (f"corpus order, batch {encoder.batch_size}", encoder.batch_size,
                          False)]
    settings += [(f"sorted, batch {size}", size, True) for size in BATCH_SIZES
                 if size != encoder.batch_size]
    seconds: dict[str, list[float]] = {label: [] for label, _, _ in settings}
    bounds = np.linspace(0, len(texts), rounds + 1).astype(int)
    for low, high in zip(bounds[:-1], bounds[1:]):  # interleaved: drift hits all alike
        for label, batch, ordered in settings:
            seconds[label].append(_seconds(encoder, texts[low:high], batch, ordered))
    table = Table(f"Encoding pipeline settings ({encoder.backend}, {len(texts)} papers)",
                  ["setting", "papers/s", "x default (median of rounds)"],
                  f"{rounds} interleaved rounds over the same papers.")
    for label, _, _ in settings:
        ratios = [d / t for d, t in zip(seconds[default[0]], seconds[label])]
        table.add(setting=label, **{"papers/s": len(texts) / sum(seconds[label]),
                                    "x default (median of rounds)": float(np.median(ratios))})
    tokens = getattr(encoder.runtime, "tokens", None)
    if tokens is not None:
        start = time.perf_counter()
        for offset in range(0, len(texts), encoder.batch_size):
            tokens(texts[offset : offset + encoder.batch_size])
        share = (time.perf_counter() - start) / sum(seconds[default[0]])
        table.add(setting="tokenizing alone: share of the default's time",
                  **{"papers/s": "", "x default (median of rounds)": share})
    return table
