#!/usr/bin/env python3
"""What `embedsearch add` and `remove` cost as the index grows (the bench's `writes` section).

Builds an index of the first N dev papers for each size, from their stored embeddings,
then times `add` of new papers and `remove` of one, each in a process of its own, and
prints seconds, MB written and peak memory per size with the largest-to-smallest ratio
(see embedsearch/benchmark/writes.py for what is measured and how). To measure another
checkout of the code, run it from there with PYTHONPATH set to that checkout: the
processes it starts import the same embedsearch it does.

    python scripts/write_cost.py --sizes 5000,79509 --added 100 --runs 3 \
        --dev-dir ../shared/data/papers --json writes.json

`--growth N` adds the bench's growth table (query latency after 30 single-paper adds to
an index of N papers against one build, and a reader's refresh after an add; 0: the
whole corpus); `--million N` the cost of an add at N replicated papers against the
corpus' size (minutes: building N papers' records and postings). `--skip-sizes` runs
only those.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from embedsearch.benchmark.growth import growth_table, million_table
from embedsearch.benchmark.writes import writes_table
from embedsearch.evaluation.devset import DevSet, default_dev_dir


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated numbers: {text!r}") from None
    if not sizes or any(size < 0 for size in sizes):
        raise argparse.ArgumentTypeError(f"need one size or more, none negative: {text!r}")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_sizes, default=[5000, 79509],
                        help="comma-separated index sizes; one beyond what the added "
                             "papers leave of the corpus (or 0) is cut to that "
                             "(default: 5000,79509)")
    parser.add_argument("--added", type=int, default=100,
                        help="new papers per add (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of each command per size; medians are reported "
                             "(default: %(default)s)")
    parser.add_argument("--dev-dir", default=str(default_dev_dir()),
                        help="the labelled data folder with papers.jsonl.gz and the stored "
                             "embeddings (default: %(default)s)")
    parser.add_argument("--json", metavar="OUT", type=Path,
                        help="also write the tables to OUT as JSON")
    parser.add_argument("--growth", type=int, metavar="N",
                        help="also the growth table at N papers (0: the whole corpus)")
    parser.add_argument("--million", type=int, metavar="N",
                        help="also the cost of an add at N replicated papers")
    parser.add_argument("--skip-sizes", action="store_true",
                        help="leave out the table of --sizes")
    args = parser.parse_args(argv)

    # Progress (each index built, each run) on stderr: a full run takes minutes.
    logging.basicConfig(format="%(message)s", level=logging.WARNING)
    logging.getLogger("embedsearch").setLevel(logging.INFO)
    devset, tables = DevSet(args.dev_dir), []
    if not args.skip_sizes:
        tables.append(writes_table(devset, args.sizes, args.added, args.runs))
        tables[-1].print()
    if args.growth is not None:
        tables.append(growth_table(devset, args.growth))
        tables[-1].print()
    if args.million:
        tables.append(million_table(devset, args.million, args.added, args.runs))
        tables[-1].print()
    if args.json:
        args.json.write_text(json.dumps([table.to_dict() for table in tables], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
