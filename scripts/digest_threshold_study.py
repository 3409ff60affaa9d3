#!/usr/bin/env python3
"""How high a paper must score to appear in a digest (issues 32 and 40): the floors of
`embedsearch.watches.digests`, chosen on the dev corpus.

A saved search is played by a keyword query of the dev corpus (an author keyword; its
relevant papers are those tagged with it, 8 to 80 each). The corpus is cut at random
into weeks of `--week` papers: each week's papers are "the papers added this week".

A query watch runs the digest's own search: an index of the whole corpus (built once
from the stored embeddings, title and abstract, each paper in a collection named after
its week) is searched as a digest searches it, hybrid, the week's papers only, the top
`--k`; a digest lists those at least the floor. Two rules are compared on the same hits:
the floor on the cosine of query and paper (`Hit.similarity`, the rule before issue 40)
and the floor on the score shown (`Hit.score`, hybrid's ranking on the cosine scale).

A library watch (the keyword's other tagged papers as the library, 90% of them
title-only as in real bibliographies, encoded from title and keywords without the
topic's own one) compares the paper's cosine to its nearest library paper, which is also
the score a recommendation shows.

Counted over every (watch, week): a listed paper tagged with the keyword is wanted;
recall is the wanted papers listed over those that arrived, the false share the listed
papers not tagged over those listed. Tags are incomplete (a paper on graph networks not
tagged "graph neural networks" counts as false), so the false share is a ceiling on the
real one. Floors are chosen by the best F2 (recall weighted twice: a digest is skimmed,
so a paper it leaves out costs more than one listed and passed over) on keywords with an
even id (`--split even`) and reported on odd ones.

    python scripts/digest_threshold_study.py --data ../shared/data/papers --split even
    python scripts/digest_threshold_study.py --data ../shared/data/papers --split odd
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

from embedsearch import Filters, IndexOptions, SearchEngine  # noqa: E402
from embedsearch.evaluation.devset import DevSet  # noqa: E402
from embedsearch.watches.digests import LIBRARY_FLOOR, QUERY_FLOOR  # noqa: E402

FLOORS = np.round(np.arange(0.20, 0.801, 0.025), 3)
#: The floor on the cosine before issue 40, the "before" of the query table.
COSINE_FLOOR_BEFORE = 0.475
FIELDS = ("title", "abstract")  # what the stored embeddings were made of


def week_of(count: int, week: int) -> np.ndarray:
    """Each row's week number: the rows shuffled (fixed seed), then cut into weeks."""
    shuffled = np.array(random.Random(32).sample(range(count), count))
    weeks = np.empty(count, np.int64)
    weeks[shuffled] = np.arange(count) // week
    return weeks


def study_index(dev: DevSet, stored: np.ndarray, weeks: np.ndarray, path: Path) -> SearchEngine:
    """The corpus as one index, each paper in the collection of its week (built once)."""
    if not (path / "manifest.json").exists():
        records = [{"id": p.id, "title": p.title, "abstract": p.abstract, "venue": p.venue,
                    "year": p.year, "collections": [f"week{weeks[i]}"]}
                   for i, p in enumerate(dev.papers)]
        SearchEngine.build(path, records, IndexOptions(fields=FIELDS, lexical_fields=FIELDS),
                           vectors=stored, overwrite=True, progress=True).close()
    return SearchEngine.open(path)


def floor_counts(scores: list[np.ndarray], wanted: list[np.ndarray],
                 arrived: list[int]) -> np.ndarray:
    """For each floor: (listed, wanted listed, wanted that arrived), over the digests
    (each one's scores best first, whether each is wanted, how many wanted arrived)."""
    counts = np.zeros((len(FLOORS), 3))
    for score, want, total in zip(scores, wanted, arrived):
        kept = score[None, :] >= FLOORS[:, None]
        counts[:, 0] += kept.sum(1)
        counts[:, 1] += (kept & want[None, :]).sum(1)
        counts[:, 2] += total
    return counts


def report(name: str, counts: np.ndarray, current: float, digests: int) -> None:
    listed, hits, tagged = counts.T
    precision = np.divide(hits, listed, out=np.zeros_like(hits), where=listed > 0)
    recall = hits / np.maximum(tagged, 1)
    f2 = np.divide(5 * precision * recall, 4 * precision + recall,
                   out=np.zeros_like(hits), where=precision + recall > 0)
    best = int(np.argmax(f2))
    print(f"\n{name} ({digests} digests); floor in use: {current}")
    print(f"{'floor':>7}{'recall':>8}{'false share':>13}{'F2':>7}{'listed/digest':>15}")
    for at, floor in enumerate(FLOORS):
        mark = "  <- best F2" if at == best else ""
        mark += "  <- in use" if np.isclose(floor, current) else ""
        print(f"{floor:>7.3f}{recall[at]:>8.3f}{1 - precision[at]:>13.3f}{f2[at]:>7.3f}"
              f"{listed[at] / digests:>15.2f}{mark}")


def query_watches(engine: SearchEngine, keywords: list, row: dict[str, int],
                  weeks: np.ndarray, k: int) -> None:
    """The query tables: the digest's hybrid search per (keyword, week), floored on the
    cosine and on the score."""
    relevant = [{row[i] for i in q.relevant} for q in keywords]
    arrived = [np.bincount(weeks[sorted(rows)], minlength=weeks.max() + 1) for rows in relevant]
    cosines, scores, wanted, totals = [], [], [], []
    for week in range(int(weeks.max()) + 1):
        filters = Filters(collections=(f"week{week}",))
        found = engine.search_many([q.text for q in keywords], k, filters=filters,
                                   evidence=False)
        for at, hits in enumerate(found):
            cosines.append(np.array([hit.similarity for hit in hits]))
            scores.append(np.array([hit.score for hit in hits]))
            wanted.append(np.array([row[hit.id] in relevant[at] for hit in hits], bool))
            totals.append(int(arrived[at][week]))
    report("query watches, floor on the cosine (before)",
           floor_counts(cosines, wanted, totals), COSINE_FLOOR_BEFORE, len(totals))
    report("query watches, floor on the score shown (after)",
           floor_counts(scores, wanted, totals), QUERY_FLOOR, len(totals))


def library_watches(dev: DevSet, stored: np.ndarray, keywords: list, row: dict[str, int],
                    weeks: np.ndarray, k: int, cache: Path) -> None:
    """The library table: each paper's cosine to its nearest library paper, per week."""
    rng = random.Random(32)
    titles = TitleVectors(dev, cache)
    scores, wanted, totals = [], [], []
    members = [np.flatnonzero(weeks == week) for week in range(int(weeks.max()) + 1)]
    for query in keywords:
        tagged = sorted(row[i] for i in query.relevant)
        library = rng.sample(tagged, len(tagged) // 2)
        full = [r for r in library if rng.random() < WITH_ABSTRACT]
        short = [r for r in library if r not in full]
        vectors = np.vstack([stored[full], titles.get(short, query.text)]) if short \
            else stored[full]
        found = np.zeros(len(stored), dtype=bool)
        found[tagged] = True
        found[library] = False  # a library's own papers are never listed
        nearest = (stored @ vectors.T).max(axis=1)
        nearest[library] = -1.0
        for week in members:
            top = week[np.argsort(-nearest[week], kind="stable")][:k]
            scores.append(nearest[top])
            wanted.append(found[top])
            totals.append(int(found[week].sum()))
    titles.save()
    report("library watches, floor on the cosine to the nearest library paper",
           floor_counts(scores, wanted, totals), LIBRARY_FLOOR, len(totals))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data/papers")
    parser.add_argument("--split", choices=("even", "odd"), default="odd")
    parser.add_argument("--week", type=int, default=1000, help="papers added per week")
    parser.add_argument("--k", type=int, default=20, help="most papers a digest lists")
    parser.add_argument("--index", default="/tmp/digest-study-index",
                        help="where the study's index is built (reused when there)")
    parser.add_argument("--watches", choices=("query", "library", "both"), default="both",
                        help="which tables (the library one needs no index)")
    parser.add_argument("--cache", default="/tmp/recommendation-study-titles.npy")
    args = parser.parse_args(argv)
    dev = DevSet(args.data)
    stored = dev.stored_vectors()
    assert stored is not None, "the study needs the stored embeddings"
    row = {paper.id: i for i, paper in enumerate(dev.papers)}
    keywords = [q for q in dev.queries if q.task == "keyword" and len(q.relevant) >= 8
                and (topic_number(q) % 2 == 0) == (args.split == "even")]
    weeks = week_of(len(stored), args.week)
    print(f"{len(keywords)} {args.split} keywords; weeks of {args.week} papers; at most "
          f"{args.k} listed per digest")
    if args.watches != "library":
        with study_index(dev, stored, weeks, Path(args.index)) as engine:
            query_watches(engine, keywords, row, weeks, args.k)
    if args.watches != "query":
        library_watches(dev, stored, keywords, row, weeks, args.k, Path(args.cache))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
