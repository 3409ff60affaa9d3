"""What `sync` costs against a Zotero library: an unchanged library against reading it.

A Zotero library of N dev papers (written with Zotero's schema by the test suite's
writer) and an index of it (built from the dev corpus's stored vectors, so no
encoding) are made once; then, in turns so that both sides meet the same load:

- read: the library read as papers (`read_papers([ZoteroLibrary(...)])`);
- sync: `SearchEngine.open(index).sync(ZoteroLibrary(...))`, opening included, on the
  unchanged library: it must write nothing and encode nothing.

The target (issue 30): sync within 2x the time of reading the database. Then a sync
after 1% of the items changed title (text re-encoded) and 1% changed year (metadata
only: the embedding cache finds their vectors), for information.

    python scripts/zotero_sync.py --items 5000 --runs 5 --dev-dir ../shared/data/papers
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from embedsearch import SearchEngine, ZoteroLibrary, read_papers  # noqa: E402
from embedsearch.evaluation.devset import DevSet, default_dev_dir  # noqa: E402
from embedsearch.storage.directory import IndexDirectory  # noqa: E402
from tests.zotero_library import ZoteroWriter  # noqa: E402


def _library(folder: Path, devset: DevSet, count: int) -> tuple[ZoteroWriter, list[int]]:
    writer = ZoteroWriter(folder)
    collections = [writer.collection(f"Topic {n}") for n in range(8)]
    items = []
    for number, paper in enumerate(devset.papers[:count]):
        item, _ = writer.item("conferencePaper", fields={
            "title": paper.title, "abstractNote": paper.abstract,
            "date": str(paper.year or 2020), "proceedingsTitle": paper.venue},
            creators=[("", name) for name in paper.authors[:5]],
            tags=list(paper.keywords[:5]), collections=[collections[number % 8]])
        items.append(item)
    writer.checkpoint()
    return writer, items


def _timed(action) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dev-dir", default=str(default_dev_dir()))
    args = parser.parse_args()
    devset = DevSet(args.dev_dir)
    vectors = devset.stored_vectors()
    assert vectors is not None, "the dev corpus's stored vectors are needed"
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        writer, items = _library(folder / "Zotero", devset, args.items)
        library = ZoteroLibrary(folder / "Zotero")
        papers = read_papers([library])
        SearchEngine.build(folder / "index", papers, vectors=vectors[:len(papers)]).close()
        generation = IndexDirectory(folder / "index").read_manifest().generation
        reads, syncs = [], []

        def sync() -> None:
            with SearchEngine.open(folder / "index", verify=False) as engine:
                report = engine.sync(library)
            assert not report.changed, report.summary()

        for _ in range(args.runs):
            reads.append(_timed(lambda: read_papers([library])))
            syncs.append(_timed(sync))
        assert IndexDirectory(folder / "index").read_manifest().generation == generation
        read, synced = statistics.median(reads), statistics.median(syncs)
        print(f"items {len(papers)}: read the library {read:.3f} s, sync unchanged "
              f"{synced:.3f} s (median of {args.runs}): ratio {synced / read:.2f}x "
              "(target <= 2x); nothing written, nothing encoded")
        step = max(1, len(items) // 100)
        for item in items[::step]:
            writer.set_field(item, "title", f"Retitled {item}")
        for item in items[1::step]:
            writer.set_field(item, "date", "1999")
        with SearchEngine.open(folder / "index", verify=False) as engine:
            start = time.perf_counter()
            report = engine.sync(library)
            took = time.perf_counter() - start
        print(f"after {len(items[::step])} retitled and {len(items[1::step])} redated: "
              f"{report.summary()} in {took:.2f} s")
        writer.close()


if __name__ == "__main__":
    main()
