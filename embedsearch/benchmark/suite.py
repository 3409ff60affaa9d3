"""The run of `embedsearch bench`: each section asked for, at the sizes asked for
(`Settings`; `--quick`'s small ones), its table printed as it comes. The sections and
the options are `options`'."""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..encoding import available_backends
from ..evaluation.devset import DevSet
from .coldstart import coldstart_table
from .digests import digests_table
from .encoding import encoding_table
from .firstsearch import first_search_table
from .growth import growth_table
from .latency import build_stored_index, latency_table
from .pipeline import pipeline_table
from .recommendations import recommendations_table
from .report import Table
from .scale import scale_table
from .updates import updates_table
from .writes import writes_table

__all__ = ["Settings", "run"]

@dataclass
class Settings:
    """Sizes of each section; `--quick` uses the small ones."""

    papers: int = 2000
    update_papers: int = 20_000
    latency_papers: int = 0  # 0: the whole dev corpus
    queries: int = 500
    scale: int = 1_000_000
    runs: int = 5
    first_search_runs: int = 5
    index_types: str = "flat,hnsw,ivf,ivfpq"
    ray_papers: int = 4000
    ray_rounds: int = 3
    milvus_papers: int = 0  # 0: the whole dev corpus
    gpu_papers: int = 0  # 0: the whole dev corpus
    gpu_cpu_papers: int = 4000
    write_sizes: str = "5000,0"  # 0: the whole dev corpus but the added papers
    write_added: int = 100
    write_runs: int = 3
    growth_papers: int = 0  # 0: the whole dev corpus but the added papers
    growth_queries: int = 200
    recommendation_examples: int = 1000
    digest_added: int = 1000
    digest_papers: int = 0  # 0: the whole dev corpus
    mcp_calls: int = 100


_QUICK = Settings(papers=48, update_papers=300, latency_papers=3000, queries=50,
                  scale=20_000, runs=2, first_search_runs=1, index_types="flat,hnsw,ivf",
                  ray_papers=200, ray_rounds=1, milvus_papers=3000, gpu_papers=2000,
                  gpu_cpu_papers=200, write_sizes="300,1200", write_added=10, write_runs=2,
                  growth_papers=1200, growth_queries=20, recommendation_examples=50,
                  digest_added=30, digest_papers=600, mcp_calls=10)


def _settings(args: argparse.Namespace) -> Settings:
    chosen = _QUICK if args.quick else Settings()
    given = {f.name: getattr(args, f.name) for f in fields(Settings)
             if getattr(args, f.name, None) is not None}
    return replace(chosen, **given)


def _backends(args: argparse.Namespace) -> list[str]:
    """--backends, by default every CPU backend installed (the gpu section measures cuda)."""
    if args.backends:
        return [name.strip() for name in args.backends.split(",") if name.strip()]
    return [name for name in available_backends() if name != "cuda"]


def run(args: argparse.Namespace) -> list[Table]:
    devset = DevSet(args.data)
    settings = _settings(args)
    sections = [name.strip() for name in args.sections.split(",") if name.strip()]
    tables: list[Table] = []

    def emit(table: Table, began: float) -> None:
        table.note = (table.note + f" ({time.perf_counter() - began:.0f} s)").strip()
        table.print()
        tables.append(table)

    with tempfile.TemporaryDirectory(prefix="embedsearch-bench-") as folder:
        began = time.perf_counter()
        if "encoding" in sections:
            emit(encoding_table(devset, settings.papers, _backends(args)), began)
        if "pipeline" in sections:
            began = time.perf_counter()
            emit(pipeline_table(devset, settings.papers), began)
        if "updates" in sections:
            began = time.perf_counter()
            emit(updates_table(devset, settings.update_papers), began)
        index_dir = Path(folder) / "latency-index"
        if {"latency", "coldstart", "recommendations", "mcp"} & set(sections):
            build_stored_index(devset, index_dir, settings.latency_papers or None)
        if "latency" in sections:
            began = time.perf_counter()
            emit(latency_table(devset, index_dir, settings.queries), began)
        if "scale" in sections:
            began = time.perf_counter()
            emit(scale_table(devset, settings.scale, settings.index_types.split(","),
                             min(settings.queries, 1000)), began)
        if "coldstart" in sections:
            began = time.perf_counter()
            emit(coldstart_table(index_dir, settings.runs), began)
        if "first-search" in sections:
            began = time.perf_counter()
            emit(first_search_table(settings.first_search_runs), began)
        if "ray" in sections:
            from .ray_encoding import ray_table  # imports Ray: only when asked for

            began = time.perf_counter()
            emit(ray_table(devset, settings.ray_papers, settings.ray_rounds), began)
        if "milvus" in sections:
            from .milvus import milvus_table  # imports pymilvus: only when asked for

            began = time.perf_counter()
            emit(milvus_table(devset, Path(folder), settings.milvus_papers or None,
                              settings.queries), began)
        if "gpu" in sections:
            from .gpu import gpu_table

            began = time.perf_counter()
            emit(gpu_table(devset, settings.gpu_papers, settings.gpu_cpu_papers), began)
        if "writes" in sections:
            began = time.perf_counter()
            emit(writes_table(devset, [int(size) for size in settings.write_sizes.split(",")],
                              settings.write_added, settings.write_runs), began)
            began = time.perf_counter()
            emit(growth_table(devset, settings.growth_papers,
                              queries=settings.growth_queries), began)
        if "recommendations" in sections:
            began = time.perf_counter()
            emit(recommendations_table(devset, index_dir, settings.recommendation_examples,
                                       settings.runs), began)
        if "digests" in sections:
            began = time.perf_counter()
            emit(digests_table(devset, Path(folder) / "digest-index", settings.digest_added,
                               settings.runs, settings.digest_papers), began)
        if "mcp" in sections:
            from .assistant import assistant_table  # imports the MCP SDK: only when asked

            began = time.perf_counter()
            emit(assistant_table(devset, index_dir, settings.mcp_calls), began)
    return tables
