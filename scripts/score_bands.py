#!/usr/bin/env python3
"""What a hit's score says on its own (issue 40): on the dev corpus's labelled queries
with an odd id, the share of hits that are relevant in each band of the score shown
(`Hit.score`, hybrid search) beside the same for the cosine (`Hit.similarity`), and the
top hit's score for queries whose top hit is relevant and for those whose is not.

The index is the dev corpus built from its stored embeddings (title and abstract), as
scripts/digest_threshold_study.py builds it (and reused from there):

    python scripts/score_bands.py --data ../shared/data/papers --index /tmp/digest-study-index
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from digest_threshold_study import study_index, week_of  # noqa: E402
from recommendation_study import topic_number  # noqa: E402

from embedsearch.evaluation.devset import DevSet  # noqa: E402

BANDS = (-1.0, 0.3, 0.4, 0.5, 0.6, 0.7, 2.0)
TASKS = {"tldr": "a paper's one-line summary", "keyword": "an author keyword",
         "title": "a paper's title"}


def band_table(values: np.ndarray, relevant: np.ndarray, name: str) -> list[str]:
    lines = []
    for low, high in zip(BANDS, BANDS[1:]):
        inside = (values >= low) & (values < high)
        label = (f"under {high:.1f}" if low < -0.5 else f"{low:.1f} and over" if high > 1.5
                 else f"{low:.1f} to {high:.1f}")
        share = relevant[inside].mean() if inside.any() else float("nan")
        lines.append(f"  {name} {label:<14}{int(inside.sum()):>8}{share:>10.3f}")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data/papers")
    parser.add_argument("--index", default="/tmp/digest-study-index")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--per-task", type=int, default=300,
                        help="at most this many queries of each task")
    args = parser.parse_args(argv)
    dev = DevSet(args.data)
    stored = dev.stored_vectors()
    assert stored is not None, "the study needs the stored embeddings"
    with study_index(dev, stored, week_of(len(stored), 1000), Path(args.index)) as engine:
        for task, name in TASKS.items():
            queries = [q for q in dev.queries if q.task == task and topic_number(q) % 2][
                :args.per_task]
            found = engine.search_many([q.text for q in queries], args.k, evidence=False)
            scores = np.array([hit.score for hits in found for hit in hits])
            cosines = np.array([hit.similarity for hits in found for hit in hits])
            relevant = np.array([hit.id in q.relevant for q, hits in zip(queries, found)
                                 for hit in hits])
            print(f"\n{name} ({len(queries)} odd queries, top {args.k} hybrid hits each)")
            print(f"  {'band':<22}{'hits':>8}{'relevant':>10}")
            for line in band_table(scores, relevant, "score "):
                print(line)
            for line in band_table(cosines, relevant, "cosine"):
                print(line)
            top = np.array([hits[0].score for hits in found if hits])
            good = np.array([hits[0].id in q.relevant for q, hits in zip(queries, found)
                             if hits])
            for label, chosen in (("relevant", good), ("not relevant", ~good)):
                if chosen.any():
                    low, mid, high = np.percentile(top[chosen], [10, 50, 90])
                    print(f"  top hit {label:<13} ({int(chosen.sum()):>3} queries): score "
                          f"{low:.2f} / {mid:.2f} / {high:.2f} (10th / 50th / 90th pct)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
