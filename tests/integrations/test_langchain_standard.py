"""The LangChain retriever against LangChain's contract: LangChain's own standard suite
for retrievers on the bundled index, and the call-time options and async behaviour the
suite touches only lightly."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests

from embedsearch import Filters, SearchEngine
from embedsearch.integrations.langchain import EmbedsearchRetriever

QUERY = "low-rank visual prompting"
#: The metadata keys the docs promise on every Document (`evidence` only when asked).
DOCUMENTED_KEYS = {"id", "score", "rank", "title", "year", "venue", "url"}
#: Admits none of the sample's papers (all ICLR 2025), so a result shows who won.
NO_PAPER = Filters.parse(year="2030-")


class TestRetrieverStandardSuite(RetrieversIntegrationTests):
    """LangChain's suite, every test of it, async ones included, unchanged: only the
    properties it asks a subclass for are given here."""

    engine: SearchEngine

    @pytest.fixture(autouse=True)
    def _bundled_index(self, seed_engine: SearchEngine) -> None:
        # The suite reads `retriever_constructor_params`, a property, where a fixture
        # cannot be requested; pytest runs each test on a fresh instance and this
        # fixture first, so the property finds the session's engine here.
        self.engine = seed_engine

    @property
    def retriever_constructor(self) -> type[EmbedsearchRetriever]:
        return EmbedsearchRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"engine": self.engine}  # k stays at its default, 4

    @property
    def retriever_query_example(self) -> str:
        return QUERY


def ids(documents: list[Document]) -> list[str]:
    return [doc.metadata["id"] for doc in documents]


def test_call_time_options_override_the_constructors_for_that_call(
        seed_engine: SearchEngine) -> None:
    retriever = EmbedsearchRetriever(engine=seed_engine, k=5)
    expected = seed_engine.search(QUERY, 2, mode="dense", evidence=False)
    documents = retriever.invoke(QUERY, k=2, mode="dense")
    assert ids(documents) == [hit.paper.id for hit in expected]
    assert [doc.metadata["score"] for doc in documents] == pytest.approx(
        [hit.score for hit in expected])
    assert retriever.invoke(QUERY, filters=NO_PAPER) == []
    # Nothing sticks: the next call is the constructor's again.
    assert retriever.k == 5 and retriever.filters is None and retriever.mode == "hybrid"
    again = retriever.invoke(QUERY)
    assert ids(again) == [hit.paper.id for hit in seed_engine.search(QUERY, 5, evidence=False)]


def test_call_time_filters_replace_the_constructors(seed_engine: SearchEngine) -> None:
    retriever = EmbedsearchRetriever(engine=seed_engine, k=3, filters=NO_PAPER)
    assert retriever.invoke(QUERY) == []
    # Replaced whole, not merged: the empty Filters admits every paper.
    assert len(retriever.invoke(QUERY, filters=Filters())) == 3
    assert len(retriever.invoke(QUERY, filters=Filters.parse(year="2025"))) == 3


def test_metadata_keys_are_the_documented_ones(seed_engine: SearchEngine) -> None:
    retriever = EmbedsearchRetriever(engine=seed_engine, k=3)
    plain = retriever.invoke(QUERY)
    assert all(set(doc.metadata) == DOCUMENTED_KEYS for doc in plain)
    assert [doc.metadata["rank"] for doc in plain] == [1, 2, 3]
    assert [doc.id for doc in plain] == ids(plain)
    with_evidence = retriever.invoke(QUERY, evidence=True)
    expected = seed_engine.search(QUERY, 3, evidence=True)
    assert all(set(doc.metadata) == DOCUMENTED_KEYS | {"evidence"} for doc in with_evidence)
    assert [doc.metadata["evidence"] for doc in with_evidence] == [
        hit.evidence for hit in expected]


def test_langchain_own_keywords_do_not_break_a_call(seed_engine: SearchEngine) -> None:
    # `verbose` is read by LangChain's invoke and then handed on with the others.
    retriever = EmbedsearchRetriever(engine=seed_engine, k=2)
    assert len(retriever.invoke(QUERY, verbose=True)) == 2
    with pytest.raises(TypeError, match="top_k"):
        retriever.invoke(QUERY, top_k=1)  # a misspelt option fails, never ignored


@pytest.fixture
def search_threads() -> Iterator[list[int]]:
    """The ids of the threads that enter `SearchEngine.search` while the test runs,
    seen by a profile hook on this thread and on every thread started meanwhile."""
    entered: list[int] = []
    search_code = SearchEngine.search.__code__

    def watch(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code is search_code:
            entered.append(threading.get_ident())

    sys.setprofile(watch)
    threading.setprofile(watch)
    try:
        yield entered
    finally:
        threading.setprofile(None)  # type: ignore[arg-type]
        sys.setprofile(None)


async def test_ainvoke_searches_in_a_thread_and_keeps_the_overrides(
        seed_engine: SearchEngine, search_threads: list[int]) -> None:
    retriever = EmbedsearchRetriever(engine=seed_engine, k=4)
    loop_thread = threading.get_ident()
    documents = await retriever.ainvoke(QUERY, k=2, mode="lexical")
    assert search_threads and loop_thread not in search_threads
    expected = seed_engine.search(QUERY, 2, mode="lexical", evidence=False)
    assert ids(documents) == [hit.paper.id for hit in expected]
    assert await retriever.ainvoke(QUERY, filters=NO_PAPER) == []


async def test_concurrent_ainvokes_each_get_their_own_hits(seed_engine: SearchEngine) -> None:
    # Both searches run at once on the loop's worker threads, on one engine.
    retriever = EmbedsearchRetriever(engine=seed_engine, k=3)
    first, second = await asyncio.gather(
        retriever.ainvoke(QUERY), retriever.ainvoke("spiking neural networks", k=2))
    assert ids(first) == ids(retriever.invoke(QUERY))
    assert ids(second) == ids(retriever.invoke("spiking neural networks", k=2))
