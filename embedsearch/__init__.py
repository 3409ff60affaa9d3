"""embedsearch: find research papers by meaning.

    from embedsearch import SearchEngine
    engine = SearchEngine.open_default()   # the bundled sample's index
    for hit in engine.search("low-rank visual prompting", k=5):
        print(hit.rank, round(hit.score, 3), hit.paper.title)

Names are imported on first use, so that `import embedsearch` (and the CLI's start, and
`embedsearch info`) does not pay for FAISS, onnxruntime or torch.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import (
    DependencyError,
    DiskSpaceError,
    EmbedSearchError,
    IndexBusyError,
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

if TYPE_CHECKING:
    from .encoding import Encoder
    from .engine import SearchEngine
    from .exporting import export
    from .index.checking import CheckReport
    from .index.info import IndexInfo, index_info
    from .index.syncing import SyncReport
    from .readers import ZoteroLibrary, read_bibliography, read_papers
    from .search.results import Hit, Reason
    from .storage import IndexOptions
    from .storage.local import Local
    from .storage.milvus import Milvus
    from .watches.digests import Digest, digest
    from .watches.saved import Watch

__all__ = [
    "CheckReport",
    "DependencyError",
    "Digest",
    "EmbedSearchError",
    "Encoder",
    "Filters",
    "Hit",
    "DiskSpaceError",
    "IndexBusyError",
    "IndexCorruptError",
    "IndexExistsError",
    "IndexIncompatibleError",
    "IndexInfo",
    "IndexNotFoundError",
    "IndexOptions",
    "InputError",
    "Local",
    "Milvus",
    "ModelError",
    "Paper",
    "PaperNotFoundError",
    "QueryError",
    "Reason",
    "SearchEngine",
    "SyncReport",
    "Watch",
    "ZoteroLibrary",
    "__version__",
    "digest",
    "export",
    "index_info",
    "read_bibliography",
    "read_papers",
]

_LAZY = {
    "CheckReport": "index.checking",
    "Encoder": "encoding",
    "SearchEngine": "engine",
    "IndexInfo": "index.info",
    "index_info": "index.info",
    "read_papers": "readers",
    "read_bibliography": "readers",
    "ZoteroLibrary": "readers",
    "SyncReport": "index.syncing",
    "Watch": "watches.saved",
    "Digest": "watches.digests",
    "digest": "watches.digests",
    "export": "exporting",
    "Hit": "search.results",
    "Reason": "search.results",
    "IndexOptions": "storage",
    "Local": "storage.local",
    "Milvus": "storage.milvus",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'embedsearch' has no attribute '{name}'")
