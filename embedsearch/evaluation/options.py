"""`embedsearch eval` / scripts/evaluate.py: ranking quality, per model, side by side.

With `--queries FILE` the labelled queries are scored; without, the corpus makes its
own (`self_supervised`): a sample of papers' titles, each looking for its own
paper in an index built from abstracts alone. That needs no labels, so it can compare
models on one's own papers; it measures how well a model ties a short, dense statement
of a topic to the abstract that develops it, and says nothing of queries unlike titles
(a keyword, a question) or of papers other than the one that was titled.

Each task is scored against the index its definition calls for: `title` queries (a
paper's title) against an index of abstracts only; `tldr` queries (the author's one-line
summary) against title + abstract, with keywords in the lexical index; `keyword` queries
(an author keyword; relevant = every paper tagged with it) against title + abstract with
the keywords left out, as they are the labels themselves (indexing them turns the task
into matching the tag: lexical nDCG@10 0.03 -> 0.64 on the dev data).

Indexes are kept under the work folder, keyed by the corpus file, the limit and the
configuration, and vectors come from the embedding cache, so a second run encodes
nothing. Besides each mode, two baselines are scored side by side: plain BM25 (words
only) and the naive fusion (BM25 and dense scores min-max scaled, 50/50). With
`--milvus URI` the indexes keep their data in Milvus (one collection per task) and the
three modes are scored there; the baselines read local BM25 arrays and are left out.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SAMPLE", "TASKS", "Task", "add_arguments", "default_dev_dir"]

# Declared apart from `evaluate` (numpy, FAISS and the engine): every `embedsearch`
# command line builds this parser, and `embedsearch info` must start fast.

#: Papers whose titles become queries when no labelled queries are given.
SAMPLE = 500


@dataclass(frozen=True)
class Task:
    """How one task's index is built: embedded and lexical fields."""

    fields: tuple[str, ...]
    lexical_fields: tuple[str, ...]


TASKS = {
    "title": Task(("abstract",), ("abstract",)),
    "tldr": Task(("title", "abstract"), ("title", "abstract", "keywords")),
    "keyword": Task(("title", "abstract"), ("title", "abstract")),
}


def default_dev_dir() -> Path:
    """$EMBEDSEARCH_DEV_DATA, else ../shared/data/papers from the working directory."""
    return Path(os.environ.get("EMBEDSEARCH_DEV_DATA", "../shared/data/papers"))


def _tasks(text: str) -> list[str]:
    """--tasks: the comma-separated task names, each one of TASKS."""
    tasks = [task.strip() for task in text.split(",") if task.strip()]
    unknown = [task for task in tasks if task not in TASKS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {', '.join(unknown)} (known: "
                                         f"{', '.join(TASKS)})")
    return tasks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `embedsearch eval`, and this module's text as its description."""
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--corpus", type=Path, nargs="+", required=True, metavar="FILE",
                        help="papers files in any input format, e.g. "
                             "../shared/data/papers/papers.jsonl.gz")
    parser.add_argument("--queries", type=Path,
                        help="labelled queries (JSON lines: qid, task, query, relevant); without "
                             "them, a sample of the corpus's titles each looks for its own paper "
                             "in an index of abstracts (self-supervised)")
    parser.add_argument("--model", action="append", dest="models", metavar="MODEL",
                        help="a sentence-transformers model name or local path to score "
                             "(repeat to compare several side by side; default: the bundled "
                             "all-MiniLM-L6-v2)")
    parser.add_argument("--sample", type=int, default=SAMPLE,
                        help="without --queries: titles drawn as queries (default %(default)s)")
    parser.add_argument("--limit", type=int, help="only the first N papers, and the queries "
                                                  "whose relevant papers are all among them")
    parser.add_argument("--tasks", default=",".join(TASKS), type=_tasks,
                        help="comma-separated subset of " + ", ".join(TASKS))
    parser.add_argument("--work", type=Path, default=Path("indexes") / "eval",
                        help="where the evaluation's indexes are kept (default: %(default)s)")
    parser.add_argument("--backend", default="auto", help="encoder backend (default: auto)")
    parser.add_argument("--milvus", metavar="URI", help="keep the indexes' data in Milvus (a "
                                                        "Lite file or a server) and score the "
                                                        "three modes there")
    parser.add_argument("--json", action="store_true", help="one JSON object per row instead")
