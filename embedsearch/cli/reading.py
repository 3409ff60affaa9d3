"""What `similar` reads besides its arguments: id lists and files of example papers."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from ..engine import SearchEngine
    from ..papers import Paper

__all__ = ["example_papers", "read_ids", "read_lines"]

# A comment starts a line, or follows the id after a space: "2401.01234  # the LoRA one".
_COMMENT = re.compile(r"(^|\s)#.*$")


def read_lines(source: str) -> list[str]:
    """The lines of `source` ('-': stdin), a UTF-8 text file."""
    if source == "-":
        return sys.stdin.read().splitlines()
    path = Path(source)
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "is not a file", path=path)
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 ({exc.reason})", path=path) from None


def read_ids(sources: Sequence[str]) -> list[str]:
    """The paper ids of `sources`, one per line; blank lines and # comments ignored."""
    ids: list[str] = []
    for source in sources:
        found = [_COMMENT.sub("", line).strip() for line in read_lines(source)]
        found = [paper_id for paper_id in found if paper_id]
        if not found:
            raise InputError("holds no paper ids (one per line; # starts a comment)",
                             path=source)
        ids.extend(found)
    return list(dict.fromkeys(ids))


def example_papers(engine: SearchEngine, ids: Sequence[str],
                   papers: Sequence[Paper]) -> list[Paper]:
    """The papers of the index with `ids`, then `papers` (read from --from files)."""
    return [engine.get(paper_id) for paper_id in ids] + list(papers)
