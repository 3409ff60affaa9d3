#!/usr/bin/env python3
"""Which first parts of a word broken at a PDF line end ("semi-" + "cooperative") mean a
compound whose hyphen should stay: the share of the dev abstracts' words beginning with
each candidate prefix that are written with a hyphen after it ("semi-supervised")
rather than joined ("seminal", "semidefinite"). A prefix whose words are mostly
hyphenated (three in four or more: `--min-share`) keeps a line-end hyphen
(`readers.pdf.hyphens.COMPOUND_PREFIXES`); one that also starts common joined words
("co": "cooperative", "pre": "prediction") does not.

Papers on even lines of the corpus choose, odd ones report (`--split`).

    python scripts/hyphen_prefix_study.py --data ../shared/data/papers
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter
from pathlib import Path

CANDIDATES = ("anti", "auto", "bi", "co", "counter", "cross", "de", "fine", "half", "hyper",
              "inter", "intra", "meta", "micro", "mid", "multi", "non", "off", "on", "out",
              "over", "post", "pre", "pseudo", "quasi", "re", "self", "semi", "sub",
              "super", "trans", "tri", "ultra", "un", "under", "well")
#: Letters after the prefix for a word to count: "none" and "cot" are not compounds.
MIN_REST = 3
_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_CANDIDATES = frozenset(CANDIDATES)
_SIZES = sorted({len(prefix) for prefix in CANDIDATES})


def shares(path: Path, parity: int) -> dict[str, tuple[int, int]]:
    """(hyphenated, joined) counts per candidate over the abstracts on lines of `parity`."""
    hyphenated: Counter[str] = Counter()
    joined: Counter[str] = Counter()
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % 2 != parity:
                continue
            for word in _WORD.findall(json.loads(line)["abstract"].lower()):
                for size in _SIZES:
                    prefix = word[:size]
                    if prefix not in _CANDIDATES or len(word) - size < MIN_REST:
                        continue
                    if word[size] == "-":
                        hyphenated[prefix] += len(word) - size - 1 >= MIN_REST
                    elif "-" not in prefix:
                        joined[prefix] += 1
    return {prefix: (hyphenated[prefix], joined[prefix]) for prefix in CANDIDATES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/papers"))
    parser.add_argument("--min-share", type=float, default=0.75)
    args = parser.parse_args()
    corpus = args.data / "papers.jsonl.gz"
    tune, report = shares(corpus, 0), shares(corpus, 1)
    print(f"{'prefix':>8} {'even: hyphen/joined':>20} {'share':>6} {'odd share':>10}  kept")
    for prefix in CANDIDATES:
        (h, j), (oh, oj) = tune[prefix], report[prefix]
        share = h / (h + j) if h + j else 0.0
        odd = oh / (oh + oj) if oh + oj else 0.0
        kept = "yes" if share >= args.min_share else ""
        print(f"{prefix:>8} {h:>10,}/{j:<9,} {share:6.3f} {odd:10.3f}  {kept}")


if __name__ == "__main__":
    main()
