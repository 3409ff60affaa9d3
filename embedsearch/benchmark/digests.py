"""Digests over a week's papers: the dev corpus less its last `added` papers is built
from the stored embeddings, the last ones arrive in one `add` (encoded), and a digest of
each saved search over them is timed warm, beside the same search over the whole index
(what a digest costs more than a search). Target (issue 32): 1 s per saved search.

The saved searches are five keyword queries of the dev corpus and one library of 200
title-only entries (the titles of one in every 300 indexed papers, as a lab's
bibliography spans its topics).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from ..engine import SearchEngine
from ..evaluation.devset import DevSet
from ..papers import Paper
from ..text.dates import now
from ..watches.digests import digest
from ..watches.saved import Watch
from .report import Table

__all__ = ["digests_table"]


def digests_table(devset: DevSet, out: Path, added: int = 1000, runs: int = 5,
                  count: int = 0) -> Table:
    """Warm seconds of a digest over `added` new papers arriving in an index of the
    first `count` dev papers (0: all), per saved search."""
    vectors = devset.stored_vectors()
    if vectors is None:
        raise FileNotFoundError(f"no stored embeddings in {devset.folder}")
    kept = (count or len(devset.papers)) - added
    table = Table(f"Digests over {added:,} papers added to {kept:,}, warm",
                  ["watch", "digest s", "search s", "digest / search", "listed"],
                  f"median of {runs} runs; search: the watch's search over the whole index")
    queries = [q.text for q in devset.queries if q.task == "keyword"][:5]
    library = tuple(Paper(id=f"lab:{n}", abstract="", title=paper.title)
                    for n, paper in enumerate(devset.papers[:kept:300][:200]))
    watches = [Watch(name=f"q{n}", query=text) for n, text in enumerate(queries)]
    watches.append(Watch(name="library", papers=library))
    engine = SearchEngine.build(out, devset.papers[:kept], vectors=vectors[:kept])
    with engine:
        since = now()
        engine.add(devset.papers[kept:kept + added])
        for watch in watches:
            digest(engine, [watch], since=since)  # warm: the library's encoding, FAISS
            found, searched = [], []
            for _ in range(runs):
                start = time.perf_counter()
                section = digest(engine, [watch], since=since).sections[0]
                found.append(time.perf_counter() - start)
                start = time.perf_counter()
                if watch.query:
                    engine.search(watch.query, watch.k)
                else:
                    engine.similar_to_papers(watch.papers, watch.k)
                searched.append(time.perf_counter() - start)
            table.add(watch=watch.describe()[:40], **{
                "digest s": statistics.median(found), "search s": statistics.median(searched),
                "digest / search": statistics.median(found) / statistics.median(searched),
                "listed": len(section.hits)})
    return table
