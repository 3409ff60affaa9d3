#!/usr/bin/env python3
"""How alike a paper must be to appear in a digest (issue 32): the similarity floors of
`embedsearch.digests`, chosen on the dev corpus.

A saved search is played by a keyword query of the dev corpus (an author keyword; its
relevant papers are those tagged with it, 8 to 80 each). The corpus is cut at random
into weeks of `--week` papers: each week's papers are "the papers added this week", and
a digest lists those of them at least the floor alike to the watch, at most `--k`
(best first). Counted over every (watch, week): a listed paper tagged with the keyword
is a hit; precision is hits over listed papers, recall hits over the tagged papers
that arrived. A query watch compares the cosine of the query and the paper; a library
watch (the keyword's other tagged papers as the library, 90% of them title-only as in
real bibliographies, encoded from title and keywords without the topic's own one)
compares the paper's cosine to its nearest library paper.

Tags are incomplete (a paper on graph networks not tagged "graph neural networks" is
counted as a miss), so precision here is a floor on the real one. Floors are chosen by
the best F2 (recall weighted twice: a digest is skimmed, so a paper it leaves out costs
more than one listed and passed over) on keywords with an even id (`--split even`) and
reported on odd ones.

    python scripts/digest_threshold_study.py --data ../shared/data/papers --split even
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from recommendation_study import WITH_ABSTRACT, TitleVectors, topic_number  # noqa: E402

from embedsearch.devset import DevSet  # noqa: E402
from embedsearch.digests import LIBRARY_FLOOR, QUERY_FLOOR  # noqa: E402
from embedsearch.encoding import Encoder  # noqa: E402

FLOORS = np.round(np.arange(0.30, 0.801, 0.025), 3)


def digest_counts(scores: np.ndarray, relevant: np.ndarray, weeks: list[np.ndarray],
                  k: int) -> np.ndarray:
    """For each floor: (listed, hits, tagged that arrived), summed over the weeks."""
    counts = np.zeros((len(FLOORS), 3))
    for week in weeks:
        order = week[np.argsort(-scores[week])][:k]
        tagged = int(relevant[week].sum())
        for at, floor in enumerate(FLOORS):
            listed = order[scores[order] >= floor]
            counts[at] += (len(listed), int(relevant[listed].sum()), tagged)
    return counts


def report(name: str, counts: np.ndarray, current: float, weeks: int, watches: int) -> None:
    listed, hits, tagged = counts.T
    precision = np.divide(hits, listed, out=np.zeros_like(hits), where=listed > 0)
    recall = hits / np.maximum(tagged, 1)
    f1, f2 = (np.divide((1 + b * b) * precision * recall, b * b * precision + recall,
                        out=np.zeros_like(hits), where=precision + recall > 0)
              for b in (1, 2))
    best = int(np.argmax(f2))
    print(f"\n{name} watches ({watches} keywords x {weeks} weeks); floor in use: {current}")
    print(f"{'floor':>7}{'precision':>11}{'recall':>8}{'F1':>7}{'F2':>7}{'listed/week':>13}")
    for at, floor in enumerate(FLOORS):
        mark = "  <- best F2" if at == best else ""
        mark += "  <- in use" if np.isclose(floor, current) else ""
        print(f"{floor:>7.3f}{precision[at]:>11.3f}{recall[at]:>8.3f}{f1[at]:>7.3f}"
              f"{f2[at]:>7.3f}{listed[at] / (weeks * watches):>13.2f}{mark}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data/papers")
    parser.add_argument("--split", choices=("even", "odd"), default="odd")
    parser.add_argument("--week", type=int, default=1000, help="papers added per week")
    parser.add_argument("--k", type=int, default=20, help="most papers a digest lists")
    parser.add_argument("--cache", default="/tmp/recommendation-study-titles.npy")
    args = parser.parse_args(argv)
    dev = DevSet(args.data)
    stored = dev.stored_vectors()
    assert stored is not None, "the study needs the stored embeddings"
    row = {paper.id: i for i, paper in enumerate(dev.papers)}
    keywords = [q for q in dev.queries if q.task == "keyword" and len(q.relevant) >= 8
                and (topic_number(q) % 2 == 0) == (args.split == "even")]
    rng = random.Random(32)
    shuffled = np.array(rng.sample(range(len(stored)), len(stored)))
    weeks = [shuffled[at:at + args.week] for at in range(0, len(shuffled), args.week)]
    encoder = Encoder(backend="torch", cache=False)
    queries = encoder.encode_queries([q.text for q in keywords])
    titles = TitleVectors(dev, Path(args.cache))
    query_counts, library_counts = np.zeros((len(FLOORS), 3)), np.zeros((len(FLOORS), 3))
    for query, vector in zip(keywords, queries):
        tagged = sorted(row[i] for i in query.relevant)
        relevant = np.zeros(len(stored), dtype=bool)
        relevant[tagged] = True
        query_counts += digest_counts(stored @ vector, relevant, weeks, args.k)
        # The library: half the tagged papers (mostly title-only); the rest must be found.
        library = rng.sample(tagged, len(tagged) // 2)
        full = [r for r in library if rng.random() < WITH_ABSTRACT]
        short = [r for r in library if r not in full]
        vectors = np.vstack([stored[full], titles.get(short, query.text)]) if short \
            else stored[full]
        found = relevant.copy()
        found[library] = False  # a library's own papers are never listed
        nearest = (stored @ vectors.T).max(axis=1)
        nearest[library] = -1.0
        library_counts += digest_counts(nearest, found, weeks, args.k)
    titles.save()
    print(f"{len(keywords)} {args.split} keywords; weeks of {args.week} papers; at most "
          f"{args.k} listed per digest")
    report("query", query_counts, QUERY_FLOOR, len(weeks), len(keywords))
    report("library", library_counts, LIBRARY_FLOOR, len(weeks), len(keywords))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
