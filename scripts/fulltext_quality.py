"""Measure full-text search on the dev set of scripts/fulltext_devset.py (or on real PDFs).

Builds one index of the set's corpus.jsonl (5,000 dev abstracts) and its PDFs read in
full, asks every question of questions.jsonl in each mode (hybrid, dense, lexical),
and prints one markdown table: for the tune (even ids) and report (odd ids) halves
apart, and for each kind of question (paraphrase, quote, partial), the right paper at
rank 1 and in the top 10, MRR@10, and the right page at 1 (the right paper first AND
its `hit.passage.page` one of the pages the answer is printed on). The same for the
`--abstract-only` baseline (the PDFs' papers without passages), unless `--no-baseline`.

Where the PDFs' passages come from (`--source`): `pdf`, the reader (`read_papers` of
the folder; what a user gets); `truth`, the typeset body itself (a perfect reader);
`raw`, every page's raw PDFium text (a reader that cleans nothing).

`--windows` builds an index per passage window (`split_passages(words=60|100|150,
overlap=0|1)`; the reader's passages are joined back into blocks and cut again, see
fulltext_sources.py) and prints the table of each: choose on the tune half. `--real`
asks tests/data/pdfs/real/questions.json (statements in ten real papers' bodies, written
by a person) of an index of those PDFs and the set's corpus.

Usage:
    python scripts/fulltext_quality.py --set /tmp/ftdev [--source truth] [--windows]
    python scripts/fulltext_quality.py --set /tmp/ftdev --real [--source raw]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fulltext_sources import (  # noqa: E402
    SOURCES,
    corpus_papers,
    paper_key,
    papers_from,
    without_passages,
)

from embedsearch import SearchEngine  # noqa: E402
from embedsearch.papers import Paper  # noqa: E402
from embedsearch.passages import OVERLAP_SENTENCES, PASSAGE_WORDS  # noqa: E402
from embedsearch.search.results import Hits  # noqa: E402

__all__ = ["main"]

MODES = ("hybrid", "dense", "lexical")
KINDS = ("paraphrase", "quote", "partial")
SPLITS = ("tune", "report")
WINDOWS = tuple((words, overlap) for words in (60, 100, 150) for overlap in (0, 1))
REAL = Path(__file__).resolve().parents[1] / "tests" / "data" / "pdfs" / "real"
K = 10


@dataclass
class Score:
    """The sums over one group of questions, averaged when shown."""

    n: int = 0
    at1: int = 0
    at10: int = 0
    rr: float = 0.0
    page: int = 0

    def add(self, rank: int | None, page_right: bool) -> None:
        self.n += 1
        self.at1 += rank == 1
        self.at10 += rank is not None
        self.rr += 1.0 / rank if rank else 0.0
        self.page += rank == 1 and page_right

    def cells(self) -> list[str]:
        if not self.n:
            return ["0", "", "", "", ""]
        return [str(self.n)] + [f"{value / self.n:.3f}" for value in
                                (self.at1, self.at10, self.rr, self.page)]


def judge(question: dict[str, object], hits: Hits) -> tuple[int | None, bool]:
    """The rank of the right paper in `hits` (None: not in them), and whether the first
    hit is it with a passage on one of the answer's pages."""
    wanted = str(question["paper"])
    ranks = [hit.rank for hit in hits if paper_key(hit.paper.id) == wanted]
    rank = ranks[0] if ranks else None
    first = hits[0] if len(hits) else None
    pages = set(question["pages"])  # type: ignore[call-overload]
    right = (rank == 1 and first is not None and first.passage is not None
             and first.passage.page in pages)
    return rank, right


def ask(engine: SearchEngine, questions: list[dict[str, object]], mode: str
        ) -> list[tuple[int | None, bool, Hits]]:
    found = engine.search_many([str(q["query"]) for q in questions], K, mode=mode,
                               evidence=False)
    return [(*judge(q, hits), hits) for q, hits in zip(questions, found, strict=True)]


def build(where: Path, papers: Sequence[Paper]) -> SearchEngine:
    started = time.perf_counter()
    engine = SearchEngine.build(where, papers, overwrite=True)
    passages = sum(len(paper.passages) for paper in papers)
    print(f"built {where.name}: {len(papers)} papers, {passages} passages in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return engine


def table_rows(label: str, engine: SearchEngine, questions: list[dict[str, object]],
               notes: list[str]) -> list[str]:
    """The table's rows for one index; why the right paper's first hit had the wrong
    page goes to `notes`, one line per mode."""
    rows = []
    for mode in MODES:
        scores = {(split, kind): Score() for split in SPLITS for kind in KINDS}
        why: dict[str, int] = {}
        for question, (rank, page, hits) in zip(questions, ask(engine, questions, mode),
                                                strict=True):
            scores[str(question["split"]), str(question["kind"])].add(rank, page)
            if rank == 1 and not page:
                reason = wrong_page(question, hits)
                why[reason] = why.get(reason, 0) + 1
        for kind in KINDS:
            cells = [cell for split in SPLITS for cell in scores[split, kind].cells()]
            rows.append("| " + " | ".join([label, mode, kind, *cells]) + " |")
        if why:
            notes.append(f"- {label}, {mode}: right paper first, wrong page: " +
                         ", ".join(f"{count} {reason}" for reason, count in sorted(why.items())))
    return rows


def wrong_page(question: dict[str, object], hits: Hits) -> str:
    """Why a first hit that is the right paper has the wrong page: no passage (its
    abstract won), a passage that starts on the page before the answer's (a window that
    runs over the page break), or a passage elsewhere."""
    passage = hits[0].passage
    if passage is None or passage.page is None:
        return "abstract won"
    first = min(question["pages"])  # type: ignore[call-overload]
    return "passage from the page before" if passage.page == first - 1 else "passage elsewhere"


def header(first: str) -> list[str]:
    metrics = ["n", "paper@1", "paper@10", "MRR@10", "page@1"]
    names = [first, "mode", "question", *[f"{split} {metric}" for split in SPLITS
                                          for metric in metrics]]
    return ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]


def load_questions(set_dir: Path) -> list[dict[str, object]]:
    with (set_dir / "questions.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def dev_set(args: argparse.Namespace, workdir: Path) -> list[str]:
    corpus = corpus_papers(args.set)
    questions = load_questions(args.set)
    pdf_dir = args.set / "pdfs"
    windows = WINDOWS if args.windows else ((args.words, args.overlap),)
    lines = header("index")
    notes: list[str] = []
    for words, overlap in windows:
        pdfs = papers_from(args.source, args.set, pdf_dir, words, overlap, args.windows)
        own = args.source == "pdf" and not args.windows
        name = f"full text {args.source}" + ("" if own else f" w{words}/o{overlap}")
        with build(workdir / f"full-w{words}-o{overlap}", corpus + pdfs) as engine:
            lines += table_rows(name, engine, questions, notes)
    if not args.no_baseline:
        pdfs = without_passages(papers_from(args.source, args.set, pdf_dir, 100, 1))
        with build(workdir / "abstract-only", corpus + pdfs) as engine:
            lines += table_rows("abstract only", engine, questions, [])
    return lines + ["", "Wrong pages (both halves, all questions):", ""] + notes


def real(args: argparse.Namespace, workdir: Path) -> list[str]:
    """Right paper and right page for the real papers' questions, with one line per
    question that missed, so that a reader's failure can be looked at on its page."""
    questions = json.loads((args.real_dir / "questions.json").read_text(encoding="utf-8"))
    for question in questions:
        question["paper"] = Path(question["file"]).stem
        question["pages"] = [question["page"]]
    corpus = corpus_papers(args.set)
    pdfs = papers_from(args.source, args.set, args.real_dir, args.words, args.overlap)
    lines = ["| index | mode | question | n | paper@1 | paper@10 | MRR@10 | page@1 |",
             "|---|---|---|---|---|---|---|---|"]
    missed: list[str] = []
    indexes = [("full text " + args.source, pdfs)]
    if not args.no_baseline:
        indexes.append(("abstract only", without_passages(pdfs)))
    for label, papers in indexes:
        with build(workdir / label.replace(" ", "-"), corpus + papers) as engine:
            for mode in MODES:
                answers = ask(engine, questions, mode)
                for kind in ("paraphrase", "quote"):
                    score = Score()
                    for question, (rank, page, hits) in zip(questions, answers, strict=True):
                        if question["kind"] != kind:
                            continue
                        score.add(rank, page)
                        if label.startswith("full") and mode == "hybrid" and not page:
                            missed.append(miss(question, rank, hits))
                    lines.append("| " + " | ".join([label, mode, kind, *score.cells()]) + " |")
    return lines + ["", "Missed (full text, hybrid): question, wanted, got", ""] + missed


def miss(question: dict[str, object], rank: int | None, hits: Hits) -> str:
    first = hits[0] if len(hits) else None
    got = "nothing" if first is None else (
        f"{paper_key(first.paper.id)} p. {first.passage.page if first.passage else '-'}")
    return (f"- {question['id']} ({question['kind']}): {question['paper']} p. "
            f"{question['page']}; right paper at {rank or '>10'}; first hit {got}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, required=True,
                        help="the folder scripts/fulltext_devset.py wrote")
    parser.add_argument("--source", choices=SOURCES, default="pdf",
                        help="where the PDFs' passages come from (default: the reader)")
    parser.add_argument("--index", type=Path,
                        help="build the indexes in this folder (default: a temporary one)")
    parser.add_argument("--words", type=int, default=PASSAGE_WORDS,
                        help="passage window, words (sources truth and raw)")
    parser.add_argument("--overlap", type=int, default=OVERLAP_SENTENCES,
                        help="passage window, sentences of overlap (truth and raw)")
    parser.add_argument("--windows", action="store_true",
                        help="one index per window of 60/100/150 words, overlap 0/1")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the --abstract-only index")
    parser.add_argument("--real", action="store_true",
                        help="the real PDFs' questions instead of the dev set's")
    parser.add_argument("--real-dir", type=Path, default=REAL,
                        help="the real PDFs and their questions.json")
    args = parser.parse_args(argv)
    if args.real and args.source == "truth":
        parser.error("--real has no typeset truth: use --source pdf or raw")
    with tempfile.TemporaryDirectory(prefix="embedsearch-fulltext-") as temporary:
        workdir = args.index or Path(temporary)
        workdir.mkdir(parents=True, exist_ok=True)
        lines = real(args, workdir) if args.real else dev_set(args, workdir)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
