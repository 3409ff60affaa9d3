#!/usr/bin/env python3
"""How to use bibliography entries without abstracts as examples: what to encode, and
how much such an entry should weigh beside entries with abstracts.

Topics come from the dev corpus's keyword queries (every paper tagged with one author
keyword). For each topic, one tagged paper is the target, hidden among 5,000 dev papers
(its stored title + abstract vector, like every other paper of the index); up to 12
other tagged papers form a bibliography, each without its abstract except `--with-
abstracts` of them, and none in the index. The bibliography's vectors (title-only
entries encoded from each text variant, the others from title + abstract) are averaged,
title-only ones with each weight, and the target's rank among the 5,000 by cosine is
recorded. The topic's own keyword is taken out of every entry's keywords, as it is the
label. Topics with even query ids tune, odd ones report (`--split`).

    python scripts/title_only_study.py --data ../shared/data/papers
"""

from __future__ import annotations

import argparse
import random
import sys

import numpy as np

from embedsearch.encoding import Encoder
from embedsearch.evaluation.devset import DevSet
from embedsearch.papers import Paper, embedding_text
from embedsearch.similar.recommending import METHODS, Library, order_by

VARIANTS = {
    "title": lambda p, kw: p.title,
    "title + keywords": lambda p, kw: ". ".join([p.title, ", ".join(kw)]) if kw else p.title,
    "title + venue": lambda p, kw: f"{p.title}. {p.venue}" if p.venue else p.title,
    "title + keywords + venue": lambda p, kw: ". ".join(
        [p.title] + ([", ".join(kw)] if kw else []) + ([p.venue] if p.venue else [])),
}
WEIGHTS = (0.0, 0.25, 0.5, 1.0)  # 0: title-only entries ignored, as before


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data/papers")
    parser.add_argument("--index-size", type=int, default=5000)
    parser.add_argument("--bibliography", type=int, default=12)
    parser.add_argument("--with-abstracts", type=int, default=2)
    parser.add_argument("--split", choices=("even", "odd", "all"), default="all")
    parser.add_argument("--method", choices=sorted(METHODS), default="mean",
                        help="how the bibliography ranks the 5,000 (recommending.METHODS); "
                             "mean as when this study chose the weights")
    args = parser.parse_args(argv)
    dev = DevSet(args.data)
    papers, stored = dev.papers, dev.stored_vectors()
    assert stored is not None, "the study needs the stored embeddings"
    row = {paper.id: i for i, paper in enumerate(papers)}
    encoder = Encoder(backend="torch", cache=False)
    rng = random.Random(0)
    results: dict[tuple[str, str, float], list[int]] = {}
    topics = [q for q in dev.queries if q.task == "keyword" and len(q.relevant) >= 6]
    for query in topics:
        number = int(query.qid.rsplit("k", 1)[-1]) if query.qid[-1].isdigit() else 0
        if args.split != "all" and (number % 2 == 0) != (args.split == "even"):
            continue
        tagged = sorted(query.relevant)
        rng.shuffle(tagged)
        target, cited = tagged[0], tagged[1: 1 + args.bibliography]
        others = [i for i in rng.sample(range(len(papers)), args.index_size + len(tagged))
                  if papers[i].id not in query.relevant][: args.index_size - 1]
        index = np.array([row[target], *others])
        with_abstract = cited[: args.with_abstracts]
        full = encoder.encode_documents([embedding_text(papers[row[i]]) for i in with_abstract])
        for name, text in VARIANTS.items():
            entries: list[Paper] = [papers[row[i]] for i in cited[args.with_abstracts:]]
            texts = [text(p, [k for k in p.keywords if k.lower() != query.text.lower()])
                     for p in entries]
            titles = encoder.encode_documents(texts) if texts else np.zeros((0, full.shape[1]))
            for weight in WEIGHTS:
                weights = np.r_[np.ones(len(full)), np.full(len(titles), weight)]
                if args.method == "mean":
                    vector = (np.r_[full, titles] * weights[:, None]).sum(0) / weights.sum()
                    scores = stored[index] @ vector
                    rank = int((scores > scores[0]).sum()) + 1
                else:
                    keep = weights > 0
                    library = Library(np.r_[full, titles][keep].astype(np.float32),
                                      weights[keep].astype(np.float32),
                                      np.zeros((0, full.shape[1]), np.float32))
                    candidates = stored[index].astype(np.float32)
                    # Its own generator: the topics' draws stay those of `mean`.
                    background = candidates[random.Random(0).sample(range(len(index)),
                                                                    1000)]
                    order = order_by(args.method, library, candidates, background)
                    rank = int(np.flatnonzero(order == 0)[0]) + 1
                results.setdefault((query.qid, name, weight), []).append(rank)
    print(f"{len({k[0] for k in results})} topics ({args.split}), bibliography of "
          f"{args.bibliography} ({args.with_abstracts} with abstracts), index of "
          f"{args.index_size}")
    print(f"{'text of a title-only entry':<28}{'weight':>8}{'recall@20':>11}{'MRR':>8}"
          f"{'median rank':>13}")
    for name in VARIANTS:
        for weight in WEIGHTS:
            ranks = [r for (qid, n, w), rs in results.items() if n == name and w == weight
                     for r in rs]
            recall = float(np.mean([r <= 20 for r in ranks]))
            mrr = float(np.mean([1 / r for r in ranks]))
            print(f"{name:<28}{weight:>8}{recall:>11.3f}{mrr:>8.3f}"
                  f"{float(np.median(ranks)):>13.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
