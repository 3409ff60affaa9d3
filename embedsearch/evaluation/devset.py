"""A labelled paper collection for evaluation and benchmarks (the ../shared/data layout).

    DIR/papers.jsonl.gz                 paper records, one JSON object a line
    DIR/queries.jsonl                   {qid, task, query, relevant: [ids]}
    DIR/minilm_title_abstract_f16.npy   optional: stored embeddings, row i = paper line i
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..papers import Paper
from ..readers import read_papers
from .options import default_dev_dir

__all__ = ["DevSet", "Query", "default_dev_dir", "load_queries"]

_PAPERS = "papers.jsonl.gz"
_QUERIES = "queries.jsonl"
_VECTORS = "minilm_title_abstract_f16.npy"


@dataclass(frozen=True)
class Query:
    """One labelled query: its task (title, tldr, keyword) and the relevant paper ids."""

    qid: str
    task: str
    text: str
    relevant: frozenset[str]


def load_queries(path: Path) -> list[Query]:
    """Labelled queries, one JSON object a line: {qid, task, query, relevant: [ids]}."""
    if not path.is_file():
        raise InputError("no such file", path=path)
    queries = []
    for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            queries.append(Query(str(raw["qid"]), str(raw["task"]), str(raw["query"]),
                                 frozenset(str(i) for i in raw["relevant"])))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(f"not a labelled query ({exc})", path=path,
                             line=line_number) from None
    if not queries:
        raise InputError("holds no queries", path=path)
    return queries


class DevSet:
    """The papers, queries and (if present) stored embeddings of a labelled collection."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder else default_dev_dir()
        if not (self.folder / _PAPERS).is_file():
            raise InputError(f"no {_PAPERS} here: pass the folder of the labelled data "
                             "(e.g. ../shared/data/papers) or set EMBEDSEARCH_DEV_DATA",
                             path=self.folder)

    @cached_property
    def papers(self) -> list[Paper]:
        return read_papers([self.folder / _PAPERS])

    @cached_property
    def queries(self) -> list[Query]:
        return load_queries(self.folder / _QUERIES)

    def stored_vectors(self) -> NDArray[np.float32] | None:
        """The stored title+abstract embeddings, renormalised float32, or None if absent."""
        path = self.folder / _VECTORS
        if not path.is_file():
            return None
        vectors = np.load(path).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.ascontiguousarray(vectors, dtype=np.float32)
