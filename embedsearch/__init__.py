"""embedsearch: find research papers by meaning.

    from embedsearch import SearchEngine
    engine = SearchEngine.open("indexes/iclr2025")
    for hit in engine.search("low-rank visual prompting", k=5):
        print(hit.rank, round(hit.score, 3), hit.paper.title)
"""

from __future__ import annotations

from ._version import __version__
from .engine import Hit, IndexInfo, SearchEngine, index_info
from .errors import (
    DependencyError,
    EmbedSearchError,
    IndexCorruptError,
    IndexExistsError,
    IndexIncompatibleError,
    IndexNotFoundError,
    InputError,
    ModelError,
    PaperNotFoundError,
    QueryError,
)
from .filters import Filters
from .papers import Paper
from .readers import read_papers

__all__ = [
    "DependencyError",
    "EmbedSearchError",
    "Filters",
    "Hit",
    "IndexCorruptError",
    "IndexExistsError",
    "IndexIncompatibleError",
    "IndexInfo",
    "IndexNotFoundError",
    "InputError",
    "ModelError",
    "Paper",
    "PaperNotFoundError",
    "QueryError",
    "SearchEngine",
    "__version__",
    "index_info",
    "read_papers",
]
