"""Encoding throughput and quality of every backend against the naive pipeline.

The naive pipeline is plain `SentenceTransformer.encode` (batch 32, torch float32), what
a first version would write. Each backend encodes the same papers in the same run; its
vectors are compared with the naive ones (mean cosine) and used to answer the tldr
queries whose paper is in the sample (MRR@10 against the naive MRR@10).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..encoding import Encoder, resolve_model
from ..encoding.models import offline_hub
from ..evaluation.devset import DevSet
from ..evaluation.metrics import mrr
from ..papers import Paper, embedding_text
from ..storage.exact import exact_search
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


_ROUNDS = 4


class _Naive:
    """The naive pipeline: plain SentenceTransformer.encode, batch 32, torch float32."""

    def __init__(self) -> None:
        offline_hub()
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        self.model = SentenceTransformer(str(resolve_model().path), device="cpu")

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.encode(list(texts), batch_size=32, normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)

    encode_queries = encode_documents


def _mrr(papers: Sequence[Paper], vectors: np.ndarray, queries: np.ndarray,
         targets: Sequence[tuple[str, str]]) -> float:
    keys = np.arange(len(papers), dtype=np.int64)
    _, found = exact_search(vectors, keys, queries, 10)
    ids = [p.id for p in papers]
    return float(np.mean([mrr([ids[i] for i in row if i >= 0], {paper_id})
                          for row, (_, paper_id) in zip(found, targets)]))


def encoding_table(devset: DevSet, count: int, backends: Sequence[str]) -> Table:
    """Each pipeline encodes the same papers in interleaved rounds (a quarter of the papers
    each, every pipeline in turn), so drift in the machine's speed hits all alike; the
    ratio is the median of the per-round ratios to the naive pipeline."""
    papers, targets = sample_with_tldr_targets(devset, count)
    texts = [embedding_text(p) for p in papers]
    auto = Encoder().backend
    pipelines: dict[str, Any] = {"naive (ST encode, torch fp32)": _Naive()}
    for name in backends:
        pipelines[name + (" (auto)" if name == auto else "")] = Encoder(backend=name,
                                                                       cache=False)
    for pipeline in pipelines.values():
        pipeline.encode_documents(texts[:8])  # load, compile, warm up
    vectors = {name: np.zeros((len(texts), 384), np.float32) for name in pipelines}
    seconds: dict[str, list[float]] = {name: [] for name in pipelines}
    bounds = np.linspace(0, len(texts), _ROUNDS + 1).astype(int)
    for low, high in zip(bounds[:-1], bounds[1:]):
        for name, pipeline in pipelines.items():
            start = time.perf_counter()
            vectors[name][low:high] = pipeline.encode_documents(texts[low:high])
            seconds[name].append(time.perf_counter() - start)
    table = Table(f"Encoding {len(texts)} dev papers (title + abstract)",
                  ["pipeline", "papers/s", "x naive (median of rounds)", "mean cos", "min cos",
                   f"tldr MRR@10 ({len(targets)} q)", "ΔMRR"],
                  f"{_ROUNDS} interleaved rounds; cos = cosine to the naive float32 vectors.")
    naive_name = next(iter(pipelines))
    reference = vectors[naive_name]
    query_texts = [text for text, _ in targets]
    base_mrr = _mrr(papers, reference, pipelines[naive_name].encode_queries(query_texts),
                    targets)
    for name, pipeline in pipelines.items():
        ratios = [n / t for n, t in zip(seconds[naive_name], seconds[name])]
        cosines = np.sum(vectors[name] * reference, axis=1)
        score = _mrr(papers, vectors[name], pipeline.encode_queries(query_texts), targets)
        table.add(pipeline=name, **{"papers/s": len(texts) / sum(seconds[name]),
                                    "x naive (median of rounds)": float(np.median(ratios)),
                                    "mean cos": float(cosines.mean()),
                                    "min cos": float(cosines.min()),
                                    f"tldr MRR@10 ({len(targets)} q)": score,
                                    "ΔMRR": score - base_mrr})
    return table
