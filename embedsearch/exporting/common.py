"""What every bibliography writer (BibTeX, RIS, CSL-JSON) shares: the
papers of hits, each once, and the citation key of a paper id."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from ..errors import QueryError
from ..papers import Paper
from ..search.results import Hit

__all__ = ["citation_key", "papers_of"]

# Characters every BibTeX and biber implementation accepts in a key.
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_:./+-]")


def citation_key(paper_id: str) -> str:
    """The BibTeX key of the paper with this id: the id itself when it is a valid key."""
    safe = _KEY_UNSAFE.sub("_", paper_id)
    if safe == paper_id and safe:
        return safe
    digest = hashlib.sha256(paper_id.encode("utf-8")).hexdigest()[:8]
    return f"{safe.strip('_') or 'paper'}_{digest}"


def papers_of(items: Iterable[Hit | Paper]) -> list[Paper]:
    """The papers of `items` (hits or papers), each once, in first-seen order."""
    seen: dict[str, Paper] = {}
    for item in items:
        paper = item.paper if isinstance(item, Hit) else item
        if not isinstance(paper, Paper):
            raise QueryError(f"expected hits or papers to export, got {type(item).__name__}")
        seen.setdefault(paper.id, paper)
    return list(seen.values())
