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

from ..evaluation.options import default_dev_dir

__all__ = ["OPTIONAL_SECTIONS", "SECTIONS", "add_arguments"]

# Declared apart from the run (`suite`: numpy, FAISS, the engine): every `embedsearch`
# command line builds this parser, and `embedsearch info` must start fast.

SECTIONS = ("encoding", "pipeline", "updates", "latency", "scale", "coldstart", "first-search",
            "writes", "recommendations", "digests")
#: Sections run only when named in --sections.
OPTIONAL_SECTIONS = ("ray", "milvus", "gpu", "mcp")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `embedsearch bench`, and this module's text as its description."""
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--data", default=str(default_dev_dir()),
                        help="labelled data folder with papers.jsonl.gz, queries.jsonl and the "
                             "stored embeddings (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test (CI)")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help="comma-separated subset of: " + ", ".join(SECTIONS + OPTIONAL_SECTIONS)
                             + " (ray, milvus, gpu and mcp only when named)")
    parser.add_argument("--papers", type=int, help="papers encoded per backend (full: 2000)")
    parser.add_argument("--update-papers", type=int, help="index size for the update section "
                                                          "(full: 20000)")
    parser.add_argument("--latency-papers", type=int,
                        help="papers in the latency index (full: all 79,509)")
    parser.add_argument("--queries", type=int, help="queries timed (full: 500)")
    parser.add_argument("--scale", type=int, help="vectors in the scale section (full: 1,000,000)")
    parser.add_argument("--index-types", help="index types at scale (full: flat,hnsw,ivf,ivfpq)")
    parser.add_argument("--backends",
                        help="encoder backends compared, comma-separated (default: every CPU "
                             "backend; the gpu section measures cuda)")
    parser.add_argument("--runs", type=int, help="cold-start runs (full: 5)")
    parser.add_argument("--first-search-runs", type=int, help="first-search runs, each from an "
                                                              "empty cache (full: 5)")
    parser.add_argument("--ray-papers", type=int, help="papers built locally and with --ray "
                                                       "(full: 4000)")
    parser.add_argument("--ray-rounds", type=int, help="alternating rounds of the ray section "
                                                       "(full: 3)")
    parser.add_argument("--milvus-papers", type=int, help="papers in the milvus section's "
                                                          "indexes (full: all 79,509)")
    parser.add_argument("--gpu-papers", type=int, help="papers encoded on the GPU (full: all "
                                                       "79,509)")
    parser.add_argument("--gpu-cpu-papers", type=int, help="papers the CPU default encodes beside "
                                                           "the GPU (full: 4000)")
    parser.add_argument("--write-sizes", help="comma-separated index sizes of the writes "
                                              "section (full: 5000,0; 0: the whole corpus but "
                                              "the added papers)")
    parser.add_argument("--write-added", type=int, help="papers each `add` of the writes section "
                                                        "adds (full: 100)")
    parser.add_argument("--write-runs", type=int, help="runs of each write per size (full: 3)")
    parser.add_argument("--recommendation-examples", type=int,
                        help="example papers of the recommendations section (full: 1000)")
    parser.add_argument("--digest-added", type=int, help="papers added for the digests section "
                                                         "(full: 1000)")
    parser.add_argument("--mcp-calls", type=int, help="calls of each MCP tool and of its Python "
                                                      "twin in the mcp section (full: 100)")
    parser.add_argument("--json", metavar="FILE", help="also write every table to FILE as JSON")
