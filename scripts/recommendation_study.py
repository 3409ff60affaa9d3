#!/usr/bin/env python3
"""Recommendations from a library of several topics: which way of ranking finds a paper
of every topic, not only of the largest one (issue 31).

Topics are the dev corpus's keyword queries (papers tagged with one author keyword, 8 to
80 each). A synthetic library takes 1 to 6 topics in unequal shares (the first, the
majority, about half of it); each topic gives its tagged papers (one is held back) and,
for libraries larger than the tags allow, the papers nearest to its tagged ones, as a
large bibliography of one field holds more than one keyword's papers. As in real
bibliographies, 90% of the entries have no abstract: they are encoded from title and
keywords (the topic's own keyword taken out, being the label) and weigh
`TITLE_ONLY_WEIGHT`; the others use their stored vectors. The held-back paper of each
topic is hidden among 5,000 random dev papers (none of the chosen topics' papers), and
each method ranks those 5,000 by the library; the hidden paper's rank is recorded.

Reported per method: for single-topic libraries, and for the majority and the minority
topics of mixed ones, the share of hidden papers in the top 20 and the median rank; and
the coverage of minority topics: the share of them that at least one of the top 20 is
recommended *because of* (its nearest library entry is one of the topic's, as `because`
and `--group` show it), whether or not it is the hidden paper.
Keyword queries with an even id tune (`--split even`), odd ones report (`--split odd`).

    python scripts/recommendation_study.py --data ../shared/data/papers --split odd \
        --libraries 8
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from embedsearch.encoding import Encoder  # noqa: E402
from embedsearch.evaluation.devset import DevSet, Query  # noqa: E402
from embedsearch.similar.examples import TITLE_ONLY_WEIGHT  # noqa: E402
from embedsearch.similar.recommending import (  # noqa: E402
    Library,
    classifier_order,
    clusters_order,
    mean_order,
    nearest_order,
)

SHARES = (1.0, 0.45, 0.3, 0.2, 0.15, 0.1)  # topic i's share of a library, before scaling
TOPIC_COUNTS = (1, 2, 3, 4, 6)
SIZES = (10, 50, 200, 800)
WITH_ABSTRACT = 0.1
TOP = 20  # the recommendations a reader looks at


def variants(split: str) -> dict[str, object]:
    """The methods, with the settings tried when tuning (even) or the ones picked."""
    found: dict[str, object] = {"mean": lambda lib, c, bg: mean_order(lib, c)}
    tuning = split == "even"
    for floor, power in (((0.1, 1.0), (0.2, 1.0), (0.3, 1.0), (0.2, 0.5)) if tuning
                         else ((0.1, 1.0),)):
        found[f"clusters floor={floor} p={power}"] = (
            lambda lib, c, bg, f=floor, p=power: clusters_order(
                lib, c, threshold=0.55, floor=f, power=p, min_size=2))
    for strength in ((3.0,) if tuning else (3.0,)):
        found[f"classifier C={strength}"] = (
            lambda lib, c, bg, s=strength: classifier_order(lib, c, bg, strength=s))
    for neighbours in ((5,) if tuning else (5,)):
        found[f"nearest m={neighbours}"] = (
            lambda lib, c, bg, m=neighbours: nearest_order(lib, c, neighbours=m))
    return found


class TitleVectors:
    """Title + keywords vectors of dev papers, encoded on first need, kept on disk."""

    def __init__(self, dev: DevSet, cache: Path) -> None:
        self.papers, self.cache = dev.papers, cache
        self.encoder = Encoder(backend="torch", cache=False)
        self.known: dict[tuple[int, str], np.ndarray] = {}
        if cache.exists():
            stored = np.load(cache, allow_pickle=True).item()
            self.known.update(stored)

    def get(self, rows: list[int], label: str) -> np.ndarray:
        missing = [row for row in rows if (row, label) not in self.known]
        if missing:
            texts = []
            for row in missing:
                paper = self.papers[row]
                words = [k for k in paper.keywords if k.lower() != label.lower()]
                texts.append(". ".join([paper.title] + ([", ".join(words)] if words else [])))
            for row, vector in zip(missing, self.encoder.encode_documents(texts)):
                self.known[(row, label)] = vector
        return np.array([self.known[(row, label)] for row in rows], dtype=np.float32)

    def save(self) -> None:
        np.save(self.cache, np.array(self.known, dtype=object), allow_pickle=True)


def topic_number(query: Query) -> int:
    digits = "".join(ch for ch in query.qid.rsplit("-", 1)[-1] if ch.isdigit())
    return int(digits or 0)


def pools(topics: list[Query], row: dict[str, int], stored: np.ndarray, hidden: list[int],
          sizes: list[int], banned: set[int]) -> list[list[int]]:
    """For each topic, `size` library rows: its tagged papers but the hidden one, then the
    papers nearest to them (none hidden, none of another chosen topic)."""
    chosen = []
    for query, target, size in zip(topics, hidden, sizes):
        tagged = [row[i] for i in sorted(query.relevant) if row[i] != target]
        if size > len(tagged):
            centre = stored[tagged].mean(0)
            nearest = np.argsort(-(stored @ centre))
            extra = [int(r) for r in nearest[: size * 3]
                     if int(r) not in banned and int(r) not in tagged][: size - len(tagged)]
            tagged += extra
        chosen.append(tagged[:size])
    return chosen


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data/papers")
    parser.add_argument("--split", choices=("even", "odd"), default="odd")
    parser.add_argument("--libraries", type=int, default=6, help="per topic count and size")
    parser.add_argument("--index-size", type=int, default=5000)
    parser.add_argument("--cache", default="/tmp/recommendation-study-titles.npy")
    args = parser.parse_args(argv)
    dev = DevSet(args.data)
    stored = dev.stored_vectors()
    assert stored is not None, "the study needs the stored embeddings"
    stored = stored.astype(np.float32)
    row = {paper.id: i for i, paper in enumerate(dev.papers)}
    titles = TitleVectors(dev, Path(args.cache))
    topics = [q for q in dev.queries if q.task == "keyword" and len(q.relevant) >= 8
              and (topic_number(q) % 2 == 0) == (args.split == "even")]
    methods = variants(args.split)
    rng = random.Random(31)
    ranks: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    covered: dict[str, list[bool]] = defaultdict(list)
    for count in TOPIC_COUNTS:
        for size in SIZES:
            for _ in range(args.libraries):
                picked = _disjoint(rng, topics, count)
                raw = np.array(SHARES[:count]) / sum(SHARES[:count]) * size
                sizes = [max(1, int(round(share))) for share in raw]
                hidden = [row[rng.choice(sorted(q.relevant))] for q in picked]
                members = {row[i] for q in picked for i in q.relevant}
                entries = pools(picked, row, stored, hidden, sizes, members | set(hidden))
                vectors, weights, owner = _library(rng, entries, picked, stored, titles)
                library = Library(vectors, weights, np.zeros((0, stored.shape[1]),
                                                             dtype=np.float32))
                taken = members | {r for rows in entries for r in rows}
                others = [r for r in rng.sample(range(len(stored)), args.index_size + 2000)
                          if r not in taken][: args.index_size - count]
                index = np.array(hidden + others)
                candidates = stored[index]
                background = candidates[rng.sample(range(len(index)), 1000)]
                for name, method in methods.items():
                    order = method(library, candidates, background)  # type: ignore[operator]
                    position = {int(r): i + 1 for i, r in enumerate(order)}
                    because = set(owner[np.argmax(candidates[order[:TOP]] @ vectors.T, 1)]
                                  .tolist())
                    for topic in range(count):
                        role = "single" if count == 1 else ("majority" if topic == 0
                                                            else "minority")
                        ranks[(name, role, size)].append(position.get(topic, len(index)))
                        if role == "minority":
                            covered[name].append(topic in because)
    titles.save()
    _report(ranks, covered, methods, len(topics), args)
    return 0


def _disjoint(rng: random.Random, topics: list[Query], count: int) -> list[Query]:
    """`count` topics that share no paper."""
    while True:
        picked = rng.sample(topics, count)
        members = [set(q.relevant) for q in picked]
        if sum(len(m) for m in members) == len(set().union(*members)):
            return picked


def _library(rng: random.Random, entries: list[list[int]], topics: list[Query],
             stored: np.ndarray, titles: TitleVectors
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The library's vectors and weights, and the topic (its number) of each entry."""
    vectors, weights, owner = [], [], []
    for topic, (rows, query) in enumerate(zip(entries, topics)):
        full = [r for r in rows if rng.random() < WITH_ABSTRACT]
        short = [r for r in rows if r not in full]
        if full:
            vectors.append(stored[full])
            weights.append(np.ones(len(full)))
        if short:
            vectors.append(titles.get(short, query.text))
            weights.append(np.full(len(short), TITLE_ONLY_WEIGHT))
        owner.append(np.full(len(full) + len(short), topic))
    return (np.vstack(vectors).astype(np.float32), np.concatenate(weights).astype(np.float32),
            np.concatenate(owner))


def _report(ranks: dict[tuple[str, str, int], list[int]], covered: dict[str, list[bool]],
            methods: dict[str, object], topics: int, args: argparse.Namespace) -> None:
    print(f"{topics} {args.split} topics; {args.libraries} libraries per topic count "
          f"{TOPIC_COUNTS} and size {SIZES}; index of {args.index_size}")
    print(f"{'method':<32}" + "".join(f"{role + f' @{TOP}':>14}{'median':>8}"
                                      for role in ("single", "majority", "minority"))
          + f"{'coverage':>10}")
    for name in methods:
        cells = []
        for role in ("single", "majority", "minority"):
            found = [r for (n, ro, _), rs in ranks.items() if n == name and ro == role
                     for r in rs]
            cells.append(f"{np.mean([r <= TOP for r in found]):>14.3f}"
                         f"{statistics.median(found):>8.0f}")
        print(f"{name:<32}" + "".join(cells) + f"{np.mean(covered[name]):>10.3f}")
    print(f"minority topics found in the top {TOP}, by library size:")
    print(f"{'method':<32}" + "".join(f"{size:>8}" for size in SIZES))
    for name in methods:
        print(f"{name:<32}" + "".join(
            f"{np.mean([r <= TOP for r in ranks[(name, 'minority', size)]]):>8.3f}"
            for size in SIZES))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
