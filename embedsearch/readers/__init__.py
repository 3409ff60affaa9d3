"""Reading corpora: every input file becomes checked `Paper` records.

The format is chosen by extension (`.txt`, `.jsonl`, `.json`, `.csv`, `.tsv`, `.bib`,
`.ris`, each optionally `.gz`) or named with `format=`; inside JSON and JSON Lines the
first record may show another tool's layout (CSL-JSON, the arXiv snapshot, OpenAlex:
see `layouts`). A new format is one new module in this package that registers its
reader with `base.register_format`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import InputError
from ..papers import Paper
from . import arxiv, bibtex, csljson, csvfile, jsonarray, jsonl, openalex, ris, text  # noqa: F401
from .base import FormatSpec, Located, format_for, formats

# The imports above register each format (and layout); bibtexparser, rispy and pylatexenc
# are imported only when a file of theirs is read.
__all__ = ["FormatSpec", "formats", "iter_papers", "read_papers"]


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError("no such file", path=path)
    if path.is_dir():
        raise InputError("is a directory, not a file; pass the files inside it", path=path)
    if path.stat().st_size == 0:
        raise InputError("the file is empty", path=path)


def iter_papers(paths: Iterable[str | Path], format: str | None = None) -> Iterator[Located]:
    """(paper, "file:line") for every record of every file, in order, validated."""
    for name in paths:
        path = Path(name)
        _check_file(path)
        spec = format_for(path, format)
        count = 0
        for located in spec.read(path):
            count += 1
            yield located
        if count == 0:
            raise InputError(f"no papers found (read as {spec.name}: {spec.description})",
                             path=path)


def read_papers(paths: Iterable[str | Path], format: str | None = None) -> list[Paper]:
    """All papers of `paths`; refuses duplicate ids, naming both places they occur."""
    seen: dict[str, str] = {}
    papers: list[Paper] = []
    for paper, where in iter_papers(paths, format):
        if paper.id in seen:
            raise InputError(f"duplicate id '{paper.id}' (first at {seen[paper.id]})", path=where)
        seen[paper.id] = where
        papers.append(paper)
    return papers
