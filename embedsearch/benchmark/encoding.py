"""Encoding throughput and quality of every backend against the naive pipeline.

The naive pipeline is plain `SentenceTransformer.encode` (batch 32, torch float32), what
a first version would write. Each backend encodes the same papers in the same run; its
vectors are compared with the naive ones (mean cosine) and used to answer the tldr
queries whose paper is in the sample (MRR@10 against the naive MRR@10).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import numpy as np

from ..devset import DevSet
from ..encoding import Encoder, resolve_model
from ..metrics import mrr
from ..papers import Paper, embedding_text
from ..vectors import exact_search
from .report import Table

__all__ = ["encoding_table", "sample_with_tldr_targets"]


def sample_with_tldr_targets(devset: DevSet,
                             count: int) -> tuple[list[Paper], list[tuple[str, str]]]:
    """`count` papers, half of them the answers to tldr queries, and those (query, answer
    id) pairs; the other half are the corpus' first papers, as distractors."""
    targets = [(q.text, next(iter(q.relevant))) for q in devset.queries if q.task == "tldr"]
    wanted = {paper_id for _, paper_id in targets[: count // 2]}
    chosen = [p for p in devset.papers if p.id in wanted]
    chosen += [p for p in devset.papers if p.id not in wanted][: count - len(chosen)]
    ids = {p.id for p in chosen}
    return chosen, [(text, paper_id) for text, paper_id in targets if paper_id in ids]


def _naive(texts: Sequence[str]) -> tuple[np.ndarray, float, object]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    model = SentenceTransformer(str(resolve_model().path), device="cpu")
    model.encode(list(texts[:8]))
    start = time.perf_counter()
    vectors = model.encode(list(texts), batch_size=32, normalize_embeddings=True)
    return np.asarray(vectors, np.float32), len(texts) / (time.perf_counter() - start), model


def _mrr(papers: Sequence[Paper], vectors: np.ndarray, queries: np.ndarray,
         targets: Sequence[tuple[str, str]]) -> float:
    keys = np.arange(len(papers), dtype=np.int64)
    _, found = exact_search(vectors, keys, queries, 10)
    ids = [p.id for p in papers]
    return float(np.mean([mrr([ids[i] for i in row if i >= 0], {paper_id})
                          for row, (_, paper_id) in zip(found, targets)]))


def encoding_table(devset: DevSet, count: int, backends: Sequence[str]) -> Table:
    papers, targets = sample_with_tldr_targets(devset, count)
    texts = [embedding_text(p) for p in papers]
    table = Table(f"Encoding {len(texts)} dev papers (title + abstract)",
                  ["pipeline", "papers/s", "x naive", "mean cos", "min cos",
                   f"tldr MRR@10 ({len(targets)} q)", "ΔMRR"],
                  "Same papers, same run; cos = cosine to the naive float32 vectors.")
    reference, naive_speed, model = _naive(texts)
    naive_queries = np.asarray(model.encode([t for t, _ in targets],  # type: ignore[attr-defined]
                                            normalize_embeddings=True), np.float32)
    naive_mrr = _mrr(papers, reference, naive_queries, targets)
    auto = Encoder().backend
    table.add(pipeline="naive (ST encode, torch fp32)", **{"papers/s": naive_speed,
              "x naive": 1.0, "mean cos": 1.0, "min cos": 1.0,
              f"tldr MRR@10 ({len(targets)} q)": naive_mrr, "ΔMRR": 0.0})
    for name in backends:
        encoder = Encoder(backend=name, cache=False)
        encoder.encode(texts[:8])  # load, compile, warm up
        start = time.perf_counter()
        vectors = encoder.encode(texts)
        speed = len(texts) / (time.perf_counter() - start)
        cosines = np.sum(vectors * reference, axis=1)
        score = _mrr(papers, vectors, encoder.encode_queries([t for t, _ in targets]), targets)
        table.add(pipeline=name + (" (auto)" if name == auto else ""),
                  **{"papers/s": speed, "x naive": speed / naive_speed,
                     "mean cos": float(cosines.mean()), "min cos": float(cosines.min()),
                     f"tldr MRR@10 ({len(targets)} q)": score, "ΔMRR": score - naive_mrr})
    return table
