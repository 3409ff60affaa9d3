"""The LangChain retriever."""

from __future__ import annotations

import pytest

from embedsearch import SearchEngine


def test_langchain_retriever_returns_the_search_hits(seed_engine: SearchEngine) -> None:
    pytest.importorskip("langchain_core")
    from embedsearch.integrations.langchain import EmbedsearchRetriever

    retriever = EmbedsearchRetriever(engine=seed_engine, k=5)
    documents = retriever.invoke("low-rank visual prompting")
    expected = seed_engine.search("low-rank visual prompting", 5, evidence=False)
    assert [doc.metadata["id"] for doc in documents] == [hit.paper.id for hit in expected]
    first = documents[0]
    assert {"id", "score", "title", "year", "venue", "url"} <= set(first.metadata)
    assert first.metadata["score"] == pytest.approx(expected[0].score)
    assert first.metadata["year"] == 2025 and first.metadata["venue"] == "ICLR"
    assert first.page_content == expected[0].paper.abstract  # derived title: no repeat
