#!/usr/bin/env python3
"""What building PDFs read in full takes, per 100 PDFs: reading (parsing) and encoding
apart, with and without the body, on the PDFs of a folder (default: the real ones of
tests/data/pdfs/real).

Reading goes through the readers' worker (started first, so no file pays its start);
encoding runs the default encoder (`auto`, the backend it chose is printed) with the
embedding cache off, on the papers' texts and on their passages' texts, each timed
apart. The figures are per 100 PDFs of the folder's mix of sizes.

    python scripts/fulltext_build_time.py [--folder DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from embedsearch.encoding import Encoder
from embedsearch.papers import embedding_text
from embedsearch.passages import passage_texts
from embedsearch.readers import read_papers

REAL = Path(__file__).resolve().parent.parent / "tests" / "data" / "pdfs" / "real"


sys.path.insert(0, str(Path(__file__).resolve().parent))
from fulltext_cost import cpu_name  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", type=Path, default=REAL)
    args = parser.parse_args()
    pdfs = sorted(args.folder.glob("*.pdf"))
    read_papers(pdfs[:1], full_text=False)  # the worker started, and warm
    timed = {}
    for full in (False, True):
        start = time.perf_counter()
        papers = read_papers(pdfs, full_text=full)
        timed[full] = (time.perf_counter() - start, papers)
    papers = timed[True][1]
    encoder = Encoder(cache=False)
    encoder.encode_documents(["warm the runtime up"])
    texts = [embedding_text(paper) for paper in papers]
    passages = passage_texts(papers)
    start = time.perf_counter()
    encoder.encode_documents(texts)
    abstracts_s = time.perf_counter() - start
    start = time.perf_counter()
    encoder.encode_documents(passages)
    passages_s = time.perf_counter() - start
    per = 100 / len(papers)
    print(f"{cpu_name()}; {len(papers)} PDFs of {args.folder}, {len(passages)} passages "
          f"({len(passages) / len(papers):.1f} a paper); encoder backend {encoder.backend}")
    print("| per 100 PDFs | first pages only (--abstract-only) | read in full |\n|---|---|---|")
    print(f"| reading | {timed[False][0] * per:.0f} s | {timed[True][0] * per:.0f} s |")
    print(f"| encoding | {abstracts_s * per:.0f} s | {(abstracts_s + passages_s) * per:.0f} s "
          f"({len(passages) / passages_s:.0f} passages/s) |")
    print(f"| together | {(timed[False][0] + abstracts_s) * per:.0f} s | "
          f"{(timed[True][0] + abstracts_s + passages_s) * per:.0f} s |")


if __name__ == "__main__":
    main()
