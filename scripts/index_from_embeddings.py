#!/usr/bin/env python3
"""Build an index from a corpus file and its precomputed embeddings, without encoding.

For the 79.5k-paper dev corpus, whose `minilm_title_abstract_f16.npy` holds the bundled
model's title + abstract embeddings (row i = line i, stored as float16): building from
them takes a minute or two instead of some 40 minutes of encoding. The manifest records
the bundled model, as it made the vectors, under the default encoder backend (whose
vectors agree with the torch ones to a cosine of ~0.9999); they are renormalised after
the float16 round trip. Queries are encoded by that model, so search works as usual.

    python scripts/index_from_embeddings.py ../shared/data/papers/papers.jsonl.gz \
        ../shared/data/papers/minilm_title_abstract_f16.npy --out indexes/dev80k
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from embedsearch import IndexOptions, SearchEngine
from embedsearch.readers import read_papers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("papers", type=Path, help="corpus file (any format embedsearch reads)")
    parser.add_argument("vectors", type=Path, help=".npy array, row i = paper i of the file")
    parser.add_argument("--out", type=Path, required=True, help="index directory to create")
    parser.add_argument("--limit", type=int, help="only the first N papers")
    parser.add_argument("--index-type", default="auto", help="as for embedsearch build")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    papers = list(read_papers([args.papers]))[: args.limit]
    vectors = np.load(args.vectors, mmap_mode="r")[: len(papers)]
    # The bundled all-MiniLM-L6-v2 made the dev embeddings; the default backend runs it.
    SearchEngine.build(args.out, papers, IndexOptions(index_type=args.index_type),
                       overwrite=args.overwrite, vectors=np.asarray(vectors, dtype=np.float32))
    print(f"indexed {len(papers)} papers into {args.out} in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
