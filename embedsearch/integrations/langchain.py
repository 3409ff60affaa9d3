"""A LangChain retriever over an open `SearchEngine`, for RAG pipelines.

    from embedsearch import SearchEngine
    from embedsearch.integrations.langchain import EmbedsearchRetriever

    retriever = EmbedsearchRetriever(engine=SearchEngine.open("indexes/mine"), k=5)
    documents = retriever.invoke("graph neural networks for molecules")

Each Document's text is the paper's title and abstract; its metadata hold id, score,
rank, title, year, venue, url (and the evidence sentence when there is one), so a
chain can cite what it read. The ranking is exactly `engine.search`'s.

As LangChain's retriever contract asks, `k`, `filters`, `mode`, `diverse` and `evidence`
given to `invoke`/`ainvoke` override the constructor's for that call:

    retriever.invoke("graph neural networks", k=1, filters=Filters.parse(year="2024-"))

`ainvoke` runs the search in a worker thread, so the event loop keeps serving while the
query is encoded and ranked. LangChain's standard suite for retrievers
(`langchain_tests.integration_tests.RetrieversIntegrationTests`) runs in our tests.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import DependencyError

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError:
    raise DependencyError("the LangChain retriever needs langchain-core, which is not "
                          "installed: pip install 'embedsearch[langchain]'") from None
from pydantic import ConfigDict

from ..engine import SearchEngine
from ..filters import Filters
from ..search.results import Hit

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
    `evidence` are passed to `search` as they are. Each of them and `k` may also be
    given to `invoke`/`ainvoke`, which then uses it instead of the constructor's for
    that call only; one left out (or None) keeps the constructor's. Call-time `filters`
    replace the constructor's whole (they are not merged): `filters=Filters()` searches
    every paper.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: SearchEngine
    k: int = 4
    mode: str = "hybrid"
    filters: Filters | None = None
    diverse: bool = False
    evidence: bool = False

    # LangChain's `invoke` hands its keyword arguments to these methods once they declare
    # any besides `run_manager`; `verbose` is LangChain's own (it configures the
    # callbacks before the call) and comes along, so it is accepted and not used.
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None, filters: Filters | None = None, mode: str | None = None,
        diverse: bool | None = None, evidence: bool | None = None, verbose: bool = False,
    ) -> list[Document]:
        return self._search(query, k, filters, mode, diverse, evidence)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None, filters: Filters | None = None, mode: str | None = None,
        diverse: bool | None = None, evidence: bool | None = None, verbose: bool = False,
    ) -> list[Document]:
        # Encoding the query and ranking are CPU work of many milliseconds: on the loop
        # they would stall every other task. One engine serves many threads, and
        # to_thread carries the context (LangChain's tracing) into the worker.
        return await asyncio.to_thread(self._search, query, k, filters, mode, diverse,
                                       evidence)

    def _search(self, query: str, k: int | None, filters: Filters | None,
                 mode: str | None, diverse: bool | None,
                 evidence: bool | None) -> list[Document]:
        """`engine.search` with each option given at call time, else the constructor's."""
        hits = self.engine.search(
            query, self.k if k is None else k,
            filters=self.filters if filters is None else filters,
            mode=self.mode if mode is None else mode,
            diverse=self.diverse if diverse is None else diverse,
            evidence=self.evidence if evidence is None else evidence)
        return [hit_document(hit) for hit in hits]
