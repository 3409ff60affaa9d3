"""`embedsearch bench` / scripts/benchmark.py: the performance figures in one run.

Sections: encoding throughput and quality per backend against the naive pipeline; what
batch size and length sorting are worth; the cost of adding 1% new papers against a
full build; warm query latency at the dev corpus' size; every index type at a million
vectors; cold start of the CLI; the first search on a fresh machine against plain
sentence-transformers; what `add` and `remove` cost, each a process of its own, as the
index grows (`writes`); and, asked for by name (each needs its extra), a local build
against a `--ray` one, the dev index in local files against Milvus Lite, and encoding
on a GPU against the CPU default.
Ratios are measured side by side in the same run.
`--quick` shrinks every section to a smoke test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..encoding import available_backends
from ..evaluation.devset import DevSet, default_dev_dir
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

__all__ = ["main", "parser"]

SECTIONS = ("encoding", "pipeline", "updates", "latency", "scale", "coldstart", "first-search",
            "writes", "recommendations", "digests")
#: Sections run only when named in --sections.
OPTIONAL_SECTIONS = ("ray", "milvus", "gpu", "mcp")


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


def parser(prog: str = "embedsearch bench") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(default_dev_dir()),
                   help="labelled data folder with papers.jsonl.gz, queries.jsonl and the "
                        "stored embeddings (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test (CI)")
    p.add_argument("--sections", default=",".join(SECTIONS),
                   help="comma-separated subset of: " + ", ".join(SECTIONS + OPTIONAL_SECTIONS)
                        + " (ray, milvus, gpu and mcp only when named)")
    p.add_argument("--papers", type=int, help="papers encoded per backend (full: 2000)")
    p.add_argument("--update-papers", type=int, help="index size for the update section "
                                                     "(full: 20000)")
    p.add_argument("--latency-papers", type=int,
                   help="papers in the latency index (full: all 79,509)")
    p.add_argument("--queries", type=int, help="queries timed (full: 500)")
    p.add_argument("--scale", type=int, help="vectors in the scale section (full: 1,000,000)")
    p.add_argument("--index-types", help="index types at scale (full: flat,hnsw,ivf,ivfpq)")
    p.add_argument("--backends", default=",".join(n for n in available_backends() if n != "cuda"),
                   help="encoder backends compared (default: every CPU backend installed; the gpu "
                        "section measures cuda)")
    p.add_argument("--runs", type=int, help="cold-start runs (full: 5)")
    p.add_argument("--first-search-runs", type=int, help="first-search runs, each from an "
                                                         "empty cache (full: 5)")
    p.add_argument("--ray-papers", type=int, help="papers built locally and with --ray "
                                                  "(full: 4000)")
    p.add_argument("--ray-rounds", type=int, help="alternating rounds of the ray section "
                                                  "(full: 3)")
    p.add_argument("--milvus-papers", type=int, help="papers in the milvus section's "
                                                     "indexes (full: all 79,509)")
    p.add_argument("--gpu-papers", type=int, help="papers encoded on the GPU (full: all "
                                                  "79,509)")
    p.add_argument("--gpu-cpu-papers", type=int, help="papers the CPU default encodes beside "
                                                      "the GPU (full: 4000)")
    p.add_argument("--write-sizes", help="comma-separated index sizes of the writes "
                                         "section (full: 5000,0; 0: the whole corpus but "
                                         "the added papers)")
    p.add_argument("--write-added", type=int, help="papers each `add` of the writes section "
                                                   "adds (full: 100)")
    p.add_argument("--write-runs", type=int, help="runs of each write per size (full: 3)")
    p.add_argument("--recommendation-examples", type=int,
                   help="example papers of the recommendations section (full: 1000)")
    p.add_argument("--digest-added", type=int, help="papers added for the digests section "
                                                    "(full: 1000)")
    p.add_argument("--mcp-calls", type=int, help="calls of each MCP tool and of its Python "
                                                 "twin in the mcp section (full: 100)")
    p.add_argument("--json", metavar="FILE", help="also write every table to FILE as JSON")
    return p


def _settings(args: argparse.Namespace) -> Settings:
    chosen = _QUICK if args.quick else Settings()
    given = {f.name: getattr(args, f.name) for f in fields(Settings)
             if getattr(args, f.name, None) is not None}
    return replace(chosen, **given)


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
            emit(encoding_table(devset, settings.papers, args.backends.split(",")), began)
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    tables = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps([t.to_dict() for t in tables], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
