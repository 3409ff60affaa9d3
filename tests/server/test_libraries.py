"""Zotero's libraries over HTTP: a hit says which group library its paper is in, and
`library` filters /search (GET and the batch POST) and /papers/{id}/similar, 'My
Library' naming the papers of none."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from embedsearch import SearchEngine
from embedsearch.bundled import corpus_files
from embedsearch.readers import read_papers
from embedsearch.server import create_app

CLUB = "Reading Club"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    papers = read_papers(corpus_files())[:20]
    # Every other paper in the group library, the rest in My Library (no library).
    papers = [dataclasses.replace(paper, library=CLUB) if number % 2 else paper
              for number, paper in enumerate(papers)]
    out: Path = tmp_path_factory.mktemp("libraries") / "index"
    with SearchEngine.build(out, papers) as engine, \
            TestClient(create_app(engine, compute_map=False),
                       base_url="http://localhost") as client:
        client.club = {paper.id for paper in papers if paper.library}  # type: ignore[attr-defined]
        yield client


def test_a_hit_names_its_library_and_the_filter_keeps_one(client: TestClient) -> None:
    club: set[str] = client.club  # type: ignore[attr-defined]
    every = client.get("/search", params={"q": "language models", "k": 20}).json()["hits"]
    assert {hit["id"] for hit in every if hit.get("library") == CLUB} == club
    assert all("library" not in hit for hit in every if hit["id"] not in club)
    kept = client.get("/search", params={"q": "language models", "k": 20,
                                         "library": CLUB}).json()
    assert {hit["id"] for hit in kept["hits"]} == club
    assert kept["filters"]["libraries"] == [CLUB]
    mine = client.get("/search", params={"q": "language models", "k": 20,
                                         "library": "My Library"}).json()["hits"]
    assert mine and not {hit["id"] for hit in mine} & club


def test_the_batch_and_similar_take_the_library_too(client: TestClient) -> None:
    club: set[str] = client.club  # type: ignore[attr-defined]
    batch = client.post("/search", json={"queries": ["reinforcement learning"], "k": 20,
                                         "library": [CLUB]}).json()
    assert {hit["id"] for hit in batch["results"][0]["hits"]} == club
    some = sorted(club)[0]
    alike = client.get(f"/papers/{some}/similar", params={"k": 20, "library": CLUB}).json()
    assert {hit["id"] for hit in alike["hits"]} == club - {some}
