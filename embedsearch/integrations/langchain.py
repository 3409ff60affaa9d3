"""A LangChain retriever over an open `SearchEngine`, for RAG pipelines.

    from embedsearch import SearchEngine
    from embedsearch.integrations.langchain import EmbedsearchRetriever

    retriever = EmbedsearchRetriever(engine=SearchEngine.open("indexes/mine"), k=5)
    documents = retriever.invoke("graph neural networks for molecules")

Each Document's text is the paper's title and abstract; its metadata hold id, score,
rank, title, year, venue, url (and the evidence sentence when there is one), so a
chain can cite what it read. The ranking is exactly `engine.search`'s.
"""

from __future__ import annotations

from typing import Any

from ..errors import DependencyError

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError:
    raise DependencyError("the LangChain retriever needs langchain-core, which is not "
                          "installed: pip install 'embedsearch[langchain]'") from None
from pydantic import ConfigDict

from ..engine import SearchEngine
from ..filters import Filters
from ..results import Hit

__all__ = ["EmbedsearchRetriever", "hit_document"]


def hit_document(hit: Hit) -> Document:
    """One hit as a LangChain Document: title and abstract as text, the rest metadata."""
    paper = hit.paper
    metadata: dict[str, Any] = {
        "id": paper.id, "score": hit.score, "rank": hit.rank, "title": paper.title,
        "year": paper.year, "venue": paper.venue, "url": paper.url,
    }
    if hit.evidence is not None:
        metadata["evidence"] = hit.evidence
    text = f"{paper.title}\n\n{paper.abstract}" if not paper.title_derived else paper.abstract
    return Document(page_content=text, metadata=metadata, id=paper.id)


class EmbedsearchRetriever(BaseRetriever):
    """Retrieves papers from an open index with `engine.search` (hybrid by default).

    The caller opens and closes the engine; `filters`, `mode`, `diverse` and
    `evidence` are passed to `search` as they are.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: SearchEngine
    k: int = 4
    mode: str = "hybrid"
    filters: Filters | None = None
    diverse: bool = False
    evidence: bool = False

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        hits = self.engine.search(query, self.k, filters=self.filters, mode=self.mode,
                                  diverse=self.diverse, evidence=self.evidence)
        return [hit_document(hit) for hit in hits]
